//! User gestures: the one event type `data:submit`, its correlation id, and the flat entry that
//! `svc_consume` returns.

/// The only member of `EventType`.
pub const DATA_SUBMIT: &str = "data:submit";

/// The 8-hex-character correlation id of an action: 32-bit FNV-1a over
/// `sessionId`, `intent` and the client sequence (or the server event sequence when the card sent
/// none), separated by NUL bytes so that no two inputs collide by concatenation.
pub fn action_id(session_id: &str, intent: &str, sequence: u64) -> String {
    const OFFSET_BASIS: u32 = 0x811c_9dc5;
    const PRIME: u32 = 0x0100_0193;
    let sequence = sequence.to_string();
    let mut hash = OFFSET_BASIS;
    for part in [
        session_id.as_bytes(),
        b"\0",
        intent.as_bytes(),
        b"\0",
        sequence.as_bytes(),
    ] {
        for byte in part {
            hash ^= u32::from(*byte);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    format!("{hash:08x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_reference_values() {
        // Published FNV-1a 32-bit vectors: "" -> 811c9dc5, "a" -> e40c292c.
        fn fnv(bytes: &[u8]) -> u32 {
            bytes
                .iter()
                .fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(*b)).wrapping_mul(0x0100_0193))
        }
        assert_eq!(fnv(b""), 0x811c_9dc5);
        assert_eq!(fnv(b"a"), 0xe40c_292c);
        assert_eq!(action_id("s", "i", 1).len(), 8);
    }

    #[test]
    fn ids_differ_by_sequence_and_are_stable() {
        assert_eq!(action_id("s", "go", 1), action_id("s", "go", 1));
        assert_ne!(action_id("s", "go", 1), action_id("s", "go", 2));
        assert!(action_id("s", "go", 1).chars().all(|c| c.is_ascii_hexdigit()));
    }
}
