//! Prints the headings `extract` finds in each document named on the
//! command line (the kind from the file name): a quick look at what a real
//! file gives, e.g. `cargo run -p extract --example headings -- a.pdf b.odt`.

#![allow(clippy::unwrap_used, clippy::print_stdout)] // a developer's tool

use extract::{DocumentKind, extract};

fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap();
        let kind = DocumentKind::from_mime_or_name(None, &path);
        match extract(&bytes, kind) {
            Ok(extracted) => {
                let headings: Vec<&str> =
                    extracted.text.lines().filter(|line| line.starts_with('#')).collect();
                println!("{path}: {} headings", headings.len());
                for heading in headings {
                    println!("    {heading}");
                }
            }
            Err(error) => println!("{path}: {error}"),
        }
    }
}
