//! The system prompt's shape, as the seeds fix it: `<instructions>` is ten
//! numbered rules, and `<examples>` is exactly three examples, one per
//! behaviour the rules alone do not produce — targeted retrieval,
//! confirmation before an effect, stopping on a permission refusal. A
//! rule or example added, dropped or merged fails here, so a change to
//! the prompt's shape is a decision, not a drift.

use std::path::Path;

fn prompt(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The numbers of the lines that are rules (`N. text`); any other non-empty
/// line is an error, so a rule cannot hide in a paragraph.
fn rules(text: &str) -> Result<Vec<u32>, String> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (number, rest) = line.split_once(". ").ok_or(format!("not a rule: {line:?}"))?;
            let number: u32 = number.parse().map_err(|_| format!("not a rule: {line:?}"))?;
            if rest.trim().len() < 10 {
                return Err(format!("rule {number} says nothing: {line:?}"));
            }
            Ok(number)
        })
        .collect()
}

/// The examples' titles, in order (`Example — <title>.`), each followed by
/// a `User:` line and what the assistant does.
fn examples(text: &str) -> Result<Vec<String>, String> {
    let blocks: Vec<&str> =
        text.split("\n\n").map(str::trim).filter(|block| !block.is_empty()).collect();
    blocks
        .iter()
        .map(|block| {
            let lines: Vec<&str> = block.lines().collect();
            let title = lines[0]
                .strip_prefix("Example — ")
                .and_then(|title| title.strip_suffix('.'))
                .ok_or(format!("a block that is not an example: {:?}", lines[0]))?;
            if lines.len() < 3 || !lines[1].starts_with("User: ") {
                return Err(format!("example {title:?} needs a User: line and what is done"));
            }
            Ok(title.to_string())
        })
        .collect()
}

#[test]
fn instructions_are_exactly_ten_numbered_rules() {
    assert_eq!(rules(&prompt("instructions.md")), Ok((1..=10).collect::<Vec<u32>>()));
}

#[test]
fn examples_are_exactly_the_three_behaviours_the_rules_do_not_produce() {
    assert_eq!(
        examples(&prompt("examples.md")),
        Ok(vec![
            "targeted retrieval".to_string(),
            "confirmation before an effect".to_string(),
            "stopping on a permission refusal".to_string(),
        ])
    );
}

#[test]
fn the_shape_checks_can_fail() {
    let ten = prompt("instructions.md");
    let eleven = format!("{ten}11. Also do this other thing always.\n");
    assert_eq!(rules(&eleven).map(|r| r.len()), Ok(11));
    assert!(rules(&format!("{ten}Some paragraph that sneaks in a rule.\n")).is_err());
    let three = prompt("examples.md");
    let four = format!("{three}\n\nExample — a fourth.\nUser: Hi.\nYou answer.\n");
    assert_eq!(examples(&four).map(|e| e.len()), Ok(4));
    assert!(examples(&format!("{three}\n\nA note after the examples.\n")).is_err());
}
