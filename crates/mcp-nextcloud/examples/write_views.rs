//! Writes each MCP Apps view exactly as `resources/read` serves it
//! (`apps::App::html`) to `DIR/<name>.html`, for checks outside Rust that
//! run the views (ci/mcp-apps/views.mjs).
//!
//!   cargo run -q -p mcp-nextcloud --example write_views -- DIR

fn main() {
    let Some(dir) = std::env::args_os().nth(1).map(std::path::PathBuf::from) else {
        eprintln!("usage: write_views DIR (the folder the views are written to)");
        std::process::exit(2);
    };
    if let Err(error) = std::fs::create_dir_all(&dir) {
        eprintln!("cannot create {}: {error}", dir.display());
        std::process::exit(1);
    }
    for app in mcp_nextcloud::apps::all() {
        let path = dir.join(format!("{}.html", app.name));
        if let Err(error) = std::fs::write(&path, app.html()) {
            eprintln!("cannot write {}: {error}", path.display());
            std::process::exit(1);
        }
        println!("{}", path.display());
    }
}
