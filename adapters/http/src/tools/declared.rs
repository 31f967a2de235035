//! A tool as `tools/list` declares it: schemas generated once from its input and output types,
//! and the compiled input validator. Arguments are checked against the published schema before
//! dispatch, so an invalid argument is -32602 naming the field and the rule.

use std::sync::Arc;

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde_json::{Value, json};

use super::{Annotations, ToolDefinition};

pub struct Declared {
    pub name: &'static str,
    pub description: &'static str,
    pub annotations: Annotations,
    pub input_schema: Value,
    pub output_schema: Value,
    validator: Arc<jsonschema::Validator>,
}

impl Declared {
    pub fn of<T: ToolDefinition>() -> Self {
        let input_schema = schema::<T::Input>();
        let validator = jsonschema::validator_for(&input_schema).expect("generated schemas compile");
        Self {
            name: T::NAME,
            description: T::DESCRIPTION,
            annotations: T::ANNOTATIONS,
            input_schema,
            output_schema: output_schema::<T::Output>(),
            validator: Arc::new(validator),
        }
    }

    /// The `tools/list` entry: name, description, both schemas and the annotations.
    pub fn declaration(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": self.annotations,
        })
    }

    /// The first schema violation of `arguments`, as `field: rule`.
    pub fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        // Valid arguments (nearly every call) are checked without collecting errors.
        if self.validator.is_valid(arguments) {
            return Ok(());
        }
        match self.validator.iter_errors(arguments).next() {
            None => Ok(()),
            Some(e) => {
                let path = e.instance_path().to_string();
                let field = if path.is_empty() {
                    "arguments".to_owned()
                } else {
                    path.trim_start_matches('/').replace('/', ".")
                };
                // The rule, quoting at most an excerpt of the offending value.
                let quoted = svc_domain::text::excerpt(&e.instance().to_string()).into_owned();
                Err(format!("{field}: {}", e.masked_with(quoted)))
            }
        }
    }
}

/// The `format` values JSON Schema 2020-12 defines (its validation vocabulary, section 7.3).
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The published schema of `T` (both `inputSchema` and `outputSchema` start here), with only
/// the formats JSON Schema defines ([`standard_formats_only`]).
fn schema<T: JsonSchema>() -> Value {
    let generated = SchemaSettings::default()
        .with_transform(RecursiveTransform(standard_formats_only as fn(&mut Schema)))
        .into_generator()
        .into_root_schema_for::<T>();
    let mut schema = serde_json::to_value(generated).expect("schemas serialise");
    if let Some(map) = schema.as_object_mut() {
        map.remove("title");
    }
    schema
}

/// Drops a `format` JSON Schema does not define. schemars writes one for every number type
/// (`uint32`, `uint`, `int64`, `double`, ...): validators ignore it, and ajv (the TypeScript MCP
/// SDK's) warns on stderr about each on every `tools/list`. What it meant stays said: an unsigned
/// integer keeps its `minimum: 0`, a small one its `maximum`.
fn standard_formats_only(schema: &mut Schema) {
    let unknown = schema
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| !STANDARD_FORMATS.contains(&format));
    if unknown {
        schema.remove("format");
    }
}

/// MCP requires an output schema of `type: object`; a result that is one of several bodies
/// (an untagged enum: `anyOf` of objects) gets the `type` stated at the top. Subschemas that
/// schemars writes as `true` (a `serde_json::Value` field: anything) are written `{}`, which means
/// the same: the TypeScript SDK's client refuses a `tools/list` whose output schemas hold booleans.
fn output_schema<T: JsonSchema>() -> Value {
    let mut schema = schema::<T>();
    object_subschemas(&mut schema);
    let map = schema.as_object_mut().expect("a schema of a type is an object");
    match map.get("type") {
        Some(kind) => assert_eq!(kind, "object", "a tool result is a JSON object"),
        None => {
            map.insert("type".to_owned(), json!("object"));
        }
    }
    schema
}

impl AsRef<Declared> for Declared {
    fn as_ref(&self) -> &Declared {
        self
    }
}

/// Rewrites the boolean subschemas of `schema` (at the keywords that hold schemas) as objects.
fn object_subschemas(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    for (keyword, value) in map.iter_mut() {
        let subschemas: Vec<&mut Value> = match (keyword.as_str(), value) {
            ("properties" | "$defs" | "patternProperties", Value::Object(members)) => members.values_mut().collect(),
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(items)) => items.iter_mut().collect(),
            ("items" | "additionalProperties" | "not", schema) => vec![schema],
            _ => continue,
        };
        for subschema in subschemas {
            match subschema {
                Value::Bool(true) => *subschema = json!({}),
                Value::Bool(false) => *subschema = json!({ "not": {} }),
                other => object_subschemas(other),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Counts {
        total: usize,
        epoch: u32,
        cents: i64,
        ratio: f64,
        small: u8,
        #[schemars(extend("format" = "date-time"))]
        at: String,
        nested: Option<Nested>,
        list: Vec<u64>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        calls: u32,
    }

    #[test]
    fn only_the_formats_json_schema_defines_are_published_and_the_bounds_stay() {
        let schema = schema::<Counts>();
        let properties = &schema["properties"];
        for name in ["total", "epoch", "cents", "ratio", "small"] {
            assert_eq!(properties[name].get("format"), None, "{name}: {}", properties[name]);
        }
        assert_eq!(properties["list"]["items"].get("format"), None, "{schema}");
        assert_eq!(
            schema["$defs"]["Nested"]["properties"]["calls"].get("format"),
            None,
            "{schema}"
        );
        assert_eq!(properties["at"]["format"], "date-time", "a standard format stays");
        assert_eq!(properties["epoch"]["minimum"], 0, "{}", properties["epoch"]);
        assert_eq!(properties["total"]["minimum"], 0, "{}", properties["total"]);
        assert_eq!(properties["small"]["maximum"], 255, "{}", properties["small"]);
        assert_eq!(properties["cents"]["type"], "integer");
    }

    #[test]
    fn boolean_subschemas_become_objects() {
        let mut schema = json!({
            "type": "object",
            "properties": { "any": true, "list": { "type": "array", "items": true }, "nested": { "$ref": "#/$defs/N" } },
            "additionalProperties": false,
            "$defs": { "N": { "type": "object", "properties": { "deep": true }, "default": true } },
        });
        object_subschemas(&mut schema);
        assert_eq!(schema["properties"]["any"], json!({}));
        assert_eq!(schema["properties"]["list"]["items"], json!({}));
        assert_eq!(schema["additionalProperties"], json!({ "not": {} }));
        assert_eq!(schema["$defs"]["N"]["properties"]["deep"], json!({}));
        assert_eq!(
            schema["$defs"]["N"]["default"], true,
            "a value that is not a schema stays"
        );
    }
}
