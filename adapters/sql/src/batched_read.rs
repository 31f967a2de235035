//! One PostgreSQL statement for the reads of many keys that wait together.
//!
//! A kept single-key read (`reads::KeyedRead`) is wrapped in a lateral join over the keys, so the
//! statement is the same read, key by key, with its `ORDER BY` and `LIMIT` kept per key:
//!
//! ```sql
//! SELECT svc_one.*, svc_batch.n AS svc_batch_n
//! FROM json_array_elements_text($k::json) WITH ORDINALITY AS svc_batch(key, n)
//! CROSS JOIN LATERAL (<the read, its key parameter $k replaced by svc_batch.key>) AS svc_one
//! ```
//!
//! The keys travel as one JSON array in the key's own parameter, so no other parameter moves and
//! the quoting of any key is serde_json's. Each row says by `svc_batch_n` (1-based) whose key it
//! answers; a key with no row has none, as its read alone would. Duplicate keys each get theirs.
//! The position comes last: reads decoded by column index (sea-orm's tuples, `MAX(seq)`) find
//! their columns where their statement alone puts them.

use sea_orm::{DbBackend, Statement, Value};

/// The column that names, by position in the keys (from 1), which key a row answers.
pub(crate) const POSITION_COLUMN: &str = "svc_batch_n";

/// The many-keys form of one kept PostgreSQL read.
pub(crate) struct BatchedRead {
    sql: String,
    values: Vec<Value>,
    key_slot: usize,
}

impl BatchedRead {
    /// The form of `sql` (PostgreSQL's, numbered `$n` parameters) whose values hold the key at
    /// exactly one place (`is_key`); `None` for any other read, which then runs alone.
    pub(crate) fn of(sql: &str, values: &[Value], is_key: impl Fn(&Value) -> bool) -> Option<Self> {
        let mut slots = values.iter().enumerate().filter(|(_, value)| is_key(value));
        let (key_slot, _) = slots.next()?;
        if slots.next().is_some() {
            return None;
        }
        if !plain(sql) {
            return None;
        }
        let per_key = replace_parameter(sql, key_slot + 1, "svc_batch.key")?;
        Some(Self {
            sql: format!(
                "SELECT svc_one.*, svc_batch.n AS {POSITION_COLUMN} \
                 FROM json_array_elements_text(${}::json) WITH ORDINALITY AS svc_batch(key, n) \
                 CROSS JOIN LATERAL ({per_key}) AS svc_one",
                key_slot + 1
            ),
            values: values.to_vec(),
            key_slot,
        })
    }

    /// The statement that reads every key of `keys` at once.
    pub(crate) fn statement<'k>(&self, keys: impl IntoIterator<Item = &'k str>) -> Statement {
        let keys: Vec<&str> = keys.into_iter().collect();
        let array = serde_json::to_string(&keys).expect("a list of strings serialises");
        let mut values = self.values.clone();
        values[self.key_slot] = Value::String(Some(array));
        Statement::from_sql_and_values(DbBackend::Postgres, self.sql.as_str(), values)
    }
}

/// Whether `sql` is as sea-query writes a read with bound values: no comments, no escaped or
/// dollar-quoted literals, every `$` a numbered parameter. Only such text is rewritten.
fn plain(sql: &str) -> bool {
    let parameters_only = sql.match_indices('$').all(|(at, _)| {
        let after_word = sql[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        !after_word && sql[at + 1..].starts_with(|c: char| c.is_ascii_digit())
    });
    parameters_only && !sql.contains("--") && !sql.contains("/*") && !sql.contains("E'") && !sql.contains("e'")
}

/// `sql` with every `$n` parameter numbered `parameter` replaced by `with`, outside quoted
/// identifiers and literals; `None` when it has none.
fn replace_parameter(sql: &str, parameter: usize, with: &str) -> Option<String> {
    let mut out = String::with_capacity(sql.len() + with.len());
    let mut quote: Option<char> = None;
    let mut found = false;
    let mut chars = sql.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match (quote, c) {
            (Some(open), _) if c == open => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '$') => {
                let digits_end = sql[at + 1..]
                    .find(|d: char| !d.is_ascii_digit())
                    .map_or(sql.len(), |n| at + 1 + n);
                if sql[at + 1..digits_end].parse() == Ok(parameter) {
                    out.push_str(with);
                    found = true;
                    while chars.peek().is_some_and(|(next, _)| *next < digits_end) {
                        chars.next();
                    }
                    continue;
                }
            }
            (None, _) => {}
        }
        out.push(c);
    }
    found.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(value: &Value) -> bool {
        matches!(value, Value::String(Some(s)) if s == "KEY")
    }

    #[test]
    fn only_the_key_parameter_is_replaced_and_quoted_text_is_left_alone() {
        let sql = r#"SELECT "a$1", '$1' FROM "t" WHERE "x" = $1 AND "y" = $10 AND "z" = $1 LIMIT $2"#;
        assert_eq!(
            replace_parameter(sql, 1, "k").as_deref(),
            Some(r#"SELECT "a$1", '$1' FROM "t" WHERE "x" = k AND "y" = $10 AND "z" = k LIMIT $2"#)
        );
        assert_eq!(replace_parameter(sql, 3, "k"), None);
    }

    #[test]
    fn the_keys_go_in_the_key_slot_as_a_json_array_and_the_other_values_stay() {
        let values = [Value::BigInt(Some(1)), Value::String(Some("KEY".into()))];
        let read = BatchedRead::of(r#"SELECT * FROM "t" WHERE "n" > $1 AND "id" = $2"#, &values, key).unwrap();
        let statement = read.statement(["a\"b", "c\\d", "é"]);
        assert_eq!(
            statement.sql,
            "SELECT svc_one.*, svc_batch.n AS svc_batch_n \
             FROM json_array_elements_text($2::json) WITH ORDINALITY AS svc_batch(key, n) \
             CROSS JOIN LATERAL (SELECT * FROM \"t\" WHERE \"n\" > $1 AND \"id\" = svc_batch.key) AS svc_one"
        );
        let bound = statement.values.unwrap().0;
        assert_eq!(bound[0], Value::BigInt(Some(1)));
        let Value::String(Some(array)) = &bound[1] else {
            panic!("the keys as text: {bound:?}")
        };
        let keys: Vec<String> = serde_json::from_str(array).unwrap();
        assert_eq!(keys, ["a\"b", "c\\d", "é"]);
    }

    #[test]
    fn text_that_is_not_plain_sea_query_output_is_not_rewritten() {
        let values = [Value::String(Some("KEY".into()))];
        for sql in [
            "SELECT 1 -- '\n FROM t WHERE id = $1",
            "SELECT /* ' */ 1 FROM t WHERE id = $1",
            "SELECT E'\\'' FROM t WHERE id = $1",
            "SELECT $$ $1 $$ FROM t WHERE id = $1",
            "SELECT a$1 FROM t WHERE id = $1",
        ] {
            assert!(BatchedRead::of(sql, &values, key).is_none(), "{sql}");
        }
        assert!(BatchedRead::of("SELECT \"a\" FROM \"t\" WHERE \"id\" = $1", &values, key).is_some());
    }

    #[test]
    fn a_read_with_its_key_in_two_places_or_none_has_no_batched_form() {
        let twice = [Value::String(Some("KEY".into())), Value::String(Some("KEY".into()))];
        assert!(BatchedRead::of("SELECT $1, $2", &twice, key).is_none());
        assert!(BatchedRead::of("SELECT $1", &[Value::Int(Some(1))], key).is_none());
    }
}
