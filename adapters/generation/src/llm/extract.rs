//! The component in a model's reply: the fenced code block most likely to be the component
//! (`tsx`/`jsx`/`typescript` blocks first, then one with a default export), or the whole reply
//! when it has no fences but reads as a module.

/// The TSX source, or `None` when the reply holds no code. A structured reply
/// (`{ "tsx": "..." }`) is read first.
pub fn extract_tsx(reply: &str) -> Option<String> {
    if let Ok(serde_json::Value::Object(object)) = super::untrusted_json::parse(reply.trim())
        && let Some(tsx) = object.get("tsx").and_then(serde_json::Value::as_str)
    {
        // A model may still fence the code inside the JSON string.
        let code = match fenced_blocks(tsx)
            .into_iter()
            .find(|(_, code)| code.contains("export default"))
        {
            Some((_, code)) => code,
            None => tsx.to_owned(),
        };
        return Some(code.trim().to_owned());
    }
    let blocks = fenced_blocks(reply);
    let score = |(lang, code): &(String, String)| {
        let lang_score = match lang.as_str() {
            "tsx" => 3,
            "jsx" | "typescript" | "ts" => 2,
            "javascript" | "js" | "" => 1,
            _ => 0,
        };
        let export_score = if code.contains("export default") { 4 } else { 0 };
        lang_score + export_score
    };
    if let Some(best) = blocks
        .iter()
        .filter(|b| score(b) > 0)
        .max_by_key(|b| (score(b), b.1.len()))
    {
        return Some(best.1.trim().to_owned());
    }
    let trimmed = reply.trim();
    (blocks.is_empty() && (trimmed.starts_with("import ") || trimmed.contains("export default")))
        .then(|| trimmed.to_owned())
}

/// `(language, code)` of every ``` fenced block; an unclosed last block runs to the end (a reply
/// cut off at the token limit).
fn fenced_blocks(reply: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, Vec<&str>)> = None;
    for line in reply.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut current, fence) {
            (None, Some(info)) => current = Some((info.trim().to_lowercase(), Vec::new())),
            (Some(_), Some(_)) => {
                let (lang, lines) = current.take().expect("open block");
                blocks.push((lang, lines.join("\n")));
            }
            (Some((_, lines)), None) => lines.push(line),
            (None, None) => {}
        }
    }
    if let Some((lang, lines)) = current {
        blocks.push((lang, lines.join("\n")));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tsx_block_with_a_default_export_wins() {
        let reply =
            "Here you go:\n```bash\nnpm i\n```\n```tsx\nexport default function Card() { return null; }\n```\nEnjoy.";
        assert_eq!(
            extract_tsx(reply).unwrap(),
            "export default function Card() { return null; }"
        );
        let two = "```tsx\nconst helper = 1;\n```\n```tsx\nimport React from 'react';\nexport default () => null;\n```";
        assert!(extract_tsx(two).unwrap().contains("export default"));
    }

    #[test]
    fn bare_modules_and_unclosed_blocks_are_taken_whole() {
        assert_eq!(
            extract_tsx("import React from 'react';\nexport default () => null;").unwrap(),
            "import React from 'react';\nexport default () => null;"
        );
        assert_eq!(
            extract_tsx("```tsx\nexport default () => <div>").unwrap(),
            "export default () => <div>"
        );
    }

    #[test]
    fn a_structured_reply_is_read_from_its_tsx_field() {
        let reply = r#"{"tsx":"export default function Card() {\n  return null;\n}"}"#;
        assert_eq!(
            extract_tsx(reply).unwrap(),
            "export default function Card() {\n  return null;\n}"
        );
        let fenced = r#"{"tsx":"```tsx\nexport default () => null;\n```"}"#;
        assert_eq!(extract_tsx(fenced).unwrap(), "export default () => null;");
    }

    #[test]
    fn prose_without_code_is_none() {
        assert_eq!(extract_tsx("I cannot help with that."), None);
        assert_eq!(extract_tsx("```text\nnot code\n```"), None);
    }
}
