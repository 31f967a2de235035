//! The canonicaliser behind contractHash and propsSchemaHash, checked against RFC 8785's own
//! vectors (Appendix B numbers, section 3.2.3 key ordering, section 3.2.2.2 strings).

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use svc_domain::contract::canonical_sha256;

fn canonical(value: &Value) -> String {
    serde_json_canonicalizer::to_string(value).unwrap()
}

#[test]
fn appendix_b_numbers() {
    let vectors: [(u64, &str); 24] = [
        (0x0000000000000000, "0"),
        (0x8000000000000000, "0"),
        (0x0000000000000001, "5e-324"),
        (0x8000000000000001, "-5e-324"),
        (0x7fefffffffffffff, "1.7976931348623157e+308"),
        (0xffefffffffffffff, "-1.7976931348623157e+308"),
        (0x4340000000000000, "9007199254740992"),
        (0xc340000000000000, "-9007199254740992"),
        (0x4430000000000000, "295147905179352830000"),
        (0x44b52d02c7e14af5, "9.999999999999997e+22"),
        (0x44b52d02c7e14af6, "1e+23"),
        (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
        (0x444b1ae4d6e2ef4e, "999999999999999700000"),
        (0x444b1ae4d6e2ef4f, "999999999999999900000"),
        (0x444b1ae4d6e2ef50, "1e+21"),
        (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
        (0x3eb0c6f7a0b5ed8d, "0.000001"),
        (0x41b3de4355555553, "333333333.3333332"),
        (0x41b3de4355555554, "333333333.33333325"),
        (0x41b3de4355555555, "333333333.3333333"),
        (0x41b3de4355555556, "333333333.3333334"),
        (0x41b3de4355555557, "333333333.33333343"),
        (0xbecbf647612f3696, "-0.0000033333333333333333"),
        (0x43143ff3c1cb0959, "1424953923781206.2"),
    ];
    for (bits, expected) in vectors {
        let value = json!(f64::from_bits(bits));
        assert_eq!(canonical(&value), expected, "{bits:#x}");
    }
}

#[test]
fn section_3_2_3_sorts_keys_by_utf16_code_units() {
    let input: Value = serde_json::from_str(
        r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh",
            "1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control",
            "\u00f6":"Latin Small Letter O With Diaeresis"}"#,
    )
    .unwrap();
    let expected = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\
        \"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\
        \"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}";
    assert_eq!(canonical(&input), expected);
}

#[test]
fn section_3_2_2_2_strings_escape_only_what_json_requires() {
    let input = json!({ "s": "\u{20ac}$\u{000f}\nA'B\"\\\\\"/" });
    assert_eq!(canonical(&input), "{\"s\":\"\u{20ac}$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
}

#[test]
fn the_hash_is_sha256_of_the_canonical_bytes() {
    let value = json!({ "b": [1e23, "x"], "a": null });
    assert_eq!(
        canonical_sha256(&value),
        hex::encode(Sha256::digest(canonical(&value).as_bytes()))
    );
}
