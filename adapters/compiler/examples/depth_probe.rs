//! Scratch probe (not committed): parse nested TSX of a given depth on a thread of a given stack.
use oxc::allocator::Allocator;
use oxc::parser::Parser;
use oxc::span::SourceType;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kind = args[1].clone();
    let depth: usize = args[2].parse().unwrap();
    let stack: usize = args[3].parse().unwrap();
    let src = match kind.as_str() {
        "paren" => format!(
            "export default function C() {{ return {}1{}; }}",
            "(".repeat(depth),
            ")".repeat(depth)
        ),
        "jsx" => format!(
            "export default function C() {{ return {}{}; }}",
            "<a>".repeat(depth),
            "</a>".repeat(depth)
        ),
        "array" => format!(
            "export default function C() {{ return {}1{}; }}",
            "[".repeat(depth),
            "]".repeat(depth)
        ),
        "object" => format!(
            "export default function C() {{ return {}1{}; }}",
            "{a:".repeat(depth),
            "}".repeat(depth)
        ),
        "block" => format!(
            "export default function C() {{ {} }}",
            "{".repeat(depth) + &"}".repeat(depth)
        ),
        "unary" => format!("export default function C() {{ return {}1; }}", "!".repeat(depth)),
        "arrow" => format!("export default function C() {{ return {}1; }}", "()=>".repeat(depth)),
        "template" => format!(
            "export default function C() {{ return {}1{}; }}",
            "`${".repeat(depth),
            "}`".repeat(depth)
        ),
        _ => panic!(),
    };
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let a = Allocator::default();
            let r = Parser::new(&a, &src, SourceType::tsx().with_module(true)).parse();
            println!("ok diag={} panicked={}", r.diagnostics.len(), r.panicked);
        })
        .unwrap()
        .join()
        .unwrap();
}
