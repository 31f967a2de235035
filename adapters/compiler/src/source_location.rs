//! Byte offsets from oxc spans to the 1-based line numbers findings carry.

/// 1-based line of the byte `offset` in `source`; offsets past the end land on the last line.
pub(crate) fn line_of(source: &str, offset: u32) -> u32 {
    let end = usize::try_from(offset).unwrap_or(usize::MAX).min(source.len());
    let newlines = source.as_bytes()[..end].iter().filter(|&&byte| byte == b'\n').count();
    u32::try_from(newlines).map_or(u32::MAX, |n| n.saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::line_of;

    #[test]
    fn counts_lines_from_one() {
        let source = "a\nb\nc";
        assert_eq!(line_of(source, 0), 1);
        assert_eq!(line_of(source, 2), 2);
        assert_eq!(line_of(source, 4), 3);
        assert_eq!(line_of(source, 99), 3);
    }
}
