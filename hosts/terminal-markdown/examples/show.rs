//! Renders a markdown file to the terminal: `cargo run -p terminal-markdown --example show FILE [WIDTH] [plain]`.

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).map_or("-", String::as_str);
    let text = if path == "-" {
        std::io::read_to_string(std::io::stdin())?
    } else {
        std::fs::read_to_string(path)?
    };
    let width = args.get(2).and_then(|w| w.parse().ok()).unwrap_or(80);
    let color = args.get(3).is_none_or(|a| a != "plain");
    for line in terminal_markdown::render(&text, terminal_markdown::Style { color, width }) {
        println!("{line}");
    }
    Ok(())
}
