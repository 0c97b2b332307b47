//! The loop reads no file: its context, prompt included, arrives as values.
//!
//! What it may depend on is the crate graph's business
//! (`crates/system/tests/crate_graph.rs`: no MCP transport, no storage, no
//! HTTP client, no workspace crate off its allow-list). What the graph
//! cannot see is a file read from inside this crate: a prompt file pulled in
//! at compile time (`include_str!`, `include_bytes!`, `include!`, a
//! `#[path]` module) or opened at run time (`std::fs`, `tokio::fs`). The
//! sources are parsed as Rust (syn), so a grouped or nested `use`, a renamed
//! or globbed crate root, a path written inline and a path inside a macro's
//! tokens all count, not only lines that spell the name out.

use std::path::{Path, PathBuf};

#[test]
fn the_agent_reads_no_file() {
    let mut sources = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut sources);
    assert!(sources.len() >= 3, "the agent's sources are found: {sources:?}");
    for path in sources {
        let source = std::fs::read_to_string(&path).expect("the source reads");
        let found = reads::forbidden_in(&source);
        assert!(found.is_empty(), "{} uses {found:?}", path.display());
    }
}

#[test]
fn the_read_check_sees_through_grouping_nesting_and_macros() {
    for (source, expected) in [
        ("use std::{fs, io};", vec!["std::fs"]),
        ("use std::{io, fs::{read_to_string as read}};", vec!["std::fs::read_to_string"]),
        ("use tokio::fs as files;", vec!["tokio::fs"]),
        ("use std::*;", vec!["std::*"]),
        ("use std as s;", vec!["std as s"]),
        ("extern crate std as s;", vec!["extern crate std"]),
        ("fn f() { let _ = std::fs::read_to_string(\"p\"); }", vec!["std::fs::read_to_string"]),
        ("fn f() { let _ = ::std::fs::read(\"p\"); }", vec!["std::fs::read"]),
        (
            "const P: &str = include_str!(\"../../orchestrator/prompts/identity.md\");",
            vec!["include_str!"],
        ),
        ("const P: &[u8] = include_bytes!(\"prompt.md\");", vec!["include_bytes!"]),
        (
            "fn f() -> String { format!(\"{}\", include_str!(\"prompt.md\")) }",
            vec!["include_str! (in a macro)"],
        ),
        (
            "fn f() { tokio::spawn(async { tokio::fs::read(\"p\").await }); }",
            vec!["tokio::fs::read"],
        ),
        (
            "fn f() { tracing::info!(\"{:?}\", std :: fs :: read(\"p\")); }",
            vec!["std::fs (in a macro)"],
        ),
        ("#[path = \"../../orchestrator/src/prompt.rs\"] mod prompt;", vec!["#[path] mod prompt"]),
    ] {
        let found = reads::forbidden_in(source);
        for wanted in &expected {
            assert!(
                found.iter().any(|f| f.starts_with(wanted)),
                "{source}: {found:?} lacks {wanted}"
            );
        }
    }
    // What the agent does use passes: its own modules, libraries, std's
    // other modules, the word "fs" in a string.
    let clean = "use crate::model::{Message, ToolCall};\nuse super::{Agent, ToolSpec};\n\
                 use futures_util::StreamExt as _;\nuse std::sync::Mutex;\n\
                 fn f() { let _ = std::io::stdout(); tracing::info!(\"fs\"); }";
    assert_eq!(reads::forbidden_in(clean), Vec::<String>::new());
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the source folder reads") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The rule, over parsed source.
mod reads {
    use syn::visit::Visit;

    /// Modules that open files.
    const FILE_MODULES: &[&[&str]] = &[&["std", "fs"], &["tokio", "fs"]];
    /// Crate roots that reach a file module when opened whole.
    const ROOTS: &[&str] = &["std", "tokio"];
    /// Macros that read files at compile time.
    const FILE_MACROS: &[&str] = &["include_str", "include_bytes", "include"];

    /// Every forbidden use in `source`.
    pub fn forbidden_in(source: &str) -> Vec<String> {
        let file = syn::parse_file(source).expect("the agent's source parses");
        let mut check = Check { found: Vec::new() };
        check.visit_file(&file);
        check.found
    }

    struct Check {
        found: Vec<String>,
    }

    impl Check {
        fn check_path(&mut self, segments: &[String]) {
            let opens = FILE_MODULES.iter().any(|module| {
                segments.len() >= module.len()
                    && module.iter().zip(segments).all(|(want, have)| want == have)
            });
            if opens {
                self.found.push(segments.join("::"));
            }
        }

        fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
            match tree {
                syn::UseTree::Path(path) => {
                    prefix.push(path.ident.to_string());
                    self.use_tree(prefix, &path.tree);
                    prefix.pop();
                }
                syn::UseTree::Name(name) => {
                    prefix.push(name.ident.to_string());
                    self.check_path(prefix);
                    prefix.pop();
                }
                syn::UseTree::Rename(rename) => {
                    prefix.push(rename.ident.to_string());
                    // A crate root renamed reaches its file module unseen.
                    if let [root] = prefix.as_slice()
                        && ROOTS.contains(&root.as_str())
                    {
                        self.found.push(format!("{root} as {}", rename.rename));
                    }
                    self.check_path(prefix);
                    prefix.pop();
                }
                syn::UseTree::Glob(_) => {
                    if let [root] = prefix.as_slice()
                        && ROOTS.contains(&root.as_str())
                    {
                        self.found.push(format!("{root}::*"));
                    }
                    prefix.push("*".into());
                    self.check_path(prefix);
                    prefix.pop();
                }
                syn::UseTree::Group(group) => {
                    for tree in &group.items {
                        self.use_tree(prefix, tree);
                    }
                }
            }
        }
    }

    impl<'ast> Visit<'ast> for Check {
        fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
            self.use_tree(&mut Vec::new(), &item.tree);
        }

        fn visit_path(&mut self, path: &'ast syn::Path) {
            let segments: Vec<String> =
                path.segments.iter().map(|segment| segment.ident.to_string()).collect();
            self.check_path(&segments);
            syn::visit::visit_path(self, path);
        }

        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            if let Some(last) = mac.path.segments.last()
                && FILE_MACROS.contains(&last.ident.to_string().as_str())
            {
                self.found.push(format!("{}!", last.ident));
            }
            // Macro bodies are tokens, not syntax: look for the file modules
            // and the file macros among them.
            let tokens: String =
                mac.tokens.to_string().chars().filter(|c| !c.is_whitespace()).collect();
            for module in FILE_MODULES {
                if tokens.contains(&format!("{}::", module.join("::"))) {
                    self.found.push(format!("{} (in a macro)", module.join("::")));
                }
            }
            for name in FILE_MACROS {
                if tokens.contains(&format!("{name}!")) {
                    self.found.push(format!("{name}! (in a macro)"));
                }
            }
            syn::visit::visit_macro(self, mac);
        }

        fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
            if item.attrs.iter().any(|attr| attr.path().is_ident("path")) {
                self.found.push(format!("#[path] mod {}", item.ident));
            }
            syn::visit::visit_item_mod(self, item);
        }

        fn visit_item_extern_crate(&mut self, item: &'ast syn::ItemExternCrate) {
            if ROOTS.contains(&item.ident.to_string().as_str()) && item.rename.is_some() {
                self.found.push(format!("extern crate {}", item.ident));
            }
        }
    }
}
