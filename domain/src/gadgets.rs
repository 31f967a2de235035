//! Gadget descriptors: what generated UI may import on the renderer side. The standard package
//! `@svc/gadgets` (seven hooks and the kit's components) is the floor every app gets; packages an app declares in
//! `svc.json#app.gadgets` layer on top of it, and a declared package wins on a name collision.
//!
//! The hook texts are written for a language model writing a component: they are what
//! `svc_list_gadgets` shows and what a generator's prompt quotes.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

mod kit;
mod transport;
pub use transport::{GadgetBundle, bundles_for, csp_origins};

/// Package name of the standard gadget package, as components import it.
pub const STANDARD_PACKAGE: &str = "@svc/gadgets";
/// Version of the standard package this server's mount runtime provides.
pub const STANDARD_PACKAGE_VERSION: &str = "1.0.0";

/// One renderer-side package a component may import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GadgetDescriptor {
    pub package: String,
    pub version: String,
    #[serde(default)]
    pub exports: Vec<GadgetExport>,
    // Transport metadata, present for packages the mount loads from elsewhere; the standard
    // package ships inside the mount runtime and carries none of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_host: Option<String>,
    /// Subresource integrity of the bundle, `sha384-<base64>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_sri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style_url: Option<String>,
    /// URLs the package's code reaches; their origins go into the mount resources'
    /// `_meta.ui.csp.connectDomains` (see [`csp_origins`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<Vec<String>>,
    /// What the package depends on; its shape is the declarer's, kept as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types_sri: Option<String>,
}

impl GadgetDescriptor {
    /// A descriptor with no transport metadata.
    pub fn new(package: impl Into<String>, version: impl Into<String>, exports: Vec<GadgetExport>) -> Self {
        Self {
            package: package.into(),
            version: version.into(),
            exports,
            bundle_url: None,
            bundle_host: None,
            bundle_sri: None,
            style_url: None,
            connect: None,
            requires: None,
            types_url: None,
            types_sri: None,
        }
    }

    /// The export named `name`, hook or component.
    pub fn export(&self, name: &str) -> Option<&GadgetExport> {
        self.exports.iter().find(|export| export.name.as_str() == name)
    }
}

/// One export of a gadget package: `{ hook, ... }` or `{ component, ... }` on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GadgetExport {
    #[serde(flatten)]
    pub name: ExportName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The call signature, e.g. `useStream(channel): { items, last, complete }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    /// Mistakes to avoid. Accepted as one string or a list; always written as a list.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "one_or_many")]
    pub gotchas: Vec<String>,
    /// A host permission the export needs (camera, location, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// Whether an export is a hook or a component, and its exported name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportName {
    Hook(String),
    Component(String),
}

impl ExportName {
    pub fn as_str(&self) -> &str {
        match self {
            Self::Hook(name) | Self::Component(name) => name,
        }
    }
}

fn one_or_many<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(gotcha) => vec![gotcha],
        OneOrMany::Many(gotchas) => gotchas,
    })
}

/// Where the server serves the TypeScript declarations of the standard package.
pub const STANDARD_TYPES_PATH: &str = "/_svc/gadgets.d.ts";

/// The standard package: the seven hooks and the kit's components every mounted component can
/// import from `@svc/gadgets` (typed by [`STANDARD_TYPES_PATH`]).
pub fn standard_package() -> GadgetDescriptor {
    let exports = STANDARD_HOOKS
        .iter()
        .map(StandardHook::to_export)
        .chain(kit::COMPONENTS.iter().map(kit::KitComponent::to_export))
        .collect();
    GadgetDescriptor::new(STANDARD_PACKAGE, STANDARD_PACKAGE_VERSION, exports)
}

/// The packages an app sees: the standard package, unless the app declares a package of the
/// same name, followed by the app's declared packages in declaration order. When the app
/// declares one package twice, the later declaration wins and keeps the earlier position.
pub fn layer(standard: GadgetDescriptor, declared: Vec<GadgetDescriptor>) -> Vec<GadgetDescriptor> {
    let mut layered: Vec<GadgetDescriptor> = Vec::with_capacity(declared.len() + 1);
    layered.push(standard);
    for descriptor in declared {
        match layered.iter().position(|known| known.package == descriptor.package) {
            Some(index) => layered[index] = descriptor,
            None => layered.push(descriptor),
        }
    }
    layered
}

struct StandardHook {
    hook: &'static str,
    description: &'static str,
    usage: &'static str,
    example: &'static str,
    gotchas: &'static [&'static str],
}

impl StandardHook {
    fn to_export(&self) -> GadgetExport {
        GadgetExport {
            name: ExportName::Hook(self.hook.to_string()),
            description: Some(self.description.to_string()),
            usage: Some(self.usage.to_string()),
            example: Some(self.example.to_string()),
            gotchas: self.gotchas.iter().map(|gotcha| (*gotcha).to_string()).collect(),
            permission: None,
            required: None,
        }
    }
}

const STANDARD_HOOKS: &[StandardHook] = &[
    StandardHook {
        hook: "useProps",
        description: "Returns the render's current props: the object the agent passed to svc_render, \
                      validated against the contract's propsSpec. The component re-renders with the new \
                      object whenever the agent calls svc_update or svc_amend.",
        usage: "useProps<T>(): T",
        example: "const { title, rows } = useProps<{ title: string; rows: { name: string }[] }>();\n\
                  return <h2>{title}</h2>;",
        gotchas: &[
            "Props are read-only: never mutate the returned object; copy it into useState to edit locally.",
            "Optional propsSpec fields may be missing: guard with `?? defaultValue` before mapping arrays.",
            "An update may replace the whole object, so do not cache derived values across renders \
             without listing the props as dependencies.",
        ],
    },
    StandardHook {
        hook: "useAction",
        description: "Returns a function that sends one user intent to the agent. Each call becomes one \
                      `data:submit` event that the agent reads with svc_consume as `{ intent, actionData, \
                      uiContext }`. This is the only way for the UI to talk to the agent.",
        usage: "useAction(intent: string): (data?: unknown) => Promise<ActionOutcome>, where ActionOutcome is \
                { ok: true; actionId: string; duplicate: boolean } | { ok: false; code: string; message: string; \
                violations: { path: string; message: string }[] }",
        example: "const approve = useAction('approve');\n\
                  return <button data-intent=\"approve\" onClick={() => approve({ id: row.id })}>Approve</button>;",
        gotchas: &[
            "`intent` must be a key of the contract's actionSpec; `data` must match actionSpec[intent].schema \
             or the event is rejected.",
            "Call the hook at the top level of the component, then call the returned function in event \
             handlers, never during render.",
            "The promise settles when the server stored the event (`ok: true`) or refused it (`ok: false`, \
             `violations` naming each field by JSON Pointer, e.g. `/date`); it never rejects. Disable the \
             control while it is pending so a double click sends once, and show each violation on its field. \
             The agent answers later by updating props or emitting on a stream.",
            "Send plain JSON: no functions, Dates, Maps or DOM events. Convert dates to ISO strings.",
        ],
    },
    StandardHook {
        hook: "useStream",
        description: "Subscribes to a streamSpec channel the agent pushes to with svc_emit. `items` holds \
                      every payload received so far, in delivery order (append mode); `last` is the most \
                      recent payload (the current value in replace mode); `complete` turns true when the \
                      agent marks the stream finished.",
        usage: "useStream<T>(channel: string): { items: T[]; last: T | undefined; complete: boolean }",
        example: "const { items, complete } = useStream<{ line: string }>('log');\n\
                  return <ul>{items.map((item, i) => <li key={i}>{item.line}</li>)}</ul>;",
        gotchas: &[
            "`channel` must be declared in the contract's streamSpec; names starting with `_svc:` are reserved.",
            "Nothing has arrived before the first emit: `last` is undefined and `items` is empty, so render \
             a waiting state.",
            "For a replace-mode channel read `last`; for an append-mode channel render `items`.",
            "`complete` only ever becomes true on channels declared with `complete: true`.",
        ],
    },
    StandardHook {
        hook: "useContextSlot",
        description: "Binds a contextSpec slot: UI state the agent should see. The value starts at the \
                      slot's `default`; setting it keeps it locally and sends the whole slot snapshot as \
                      `uiContext` with every later action, so the agent knows what the user was looking at.",
        usage: "useContextSlot<T>(name: string): [value: T, setValue: (next: T) => void]",
        example: "const [tab, setTab] = useContextSlot<string>('selectedTab');\n\
                  return <select value={tab} onChange={(e) => setTab(e.target.value)}>...</select>;",
        gotchas: &[
            "`name` must be declared in the contract's contextSpec, and values must match the slot's schema.",
            "Setting a slot does not notify the agent by itself: it travels with the next useAction call.",
            "The value is undefined when the slot declares no default and nothing was set yet.",
        ],
    },
    StandardHook {
        hook: "useTheme",
        description: "Returns the active theme: its id, `light` or `dark` mode, and the `--svc-*` CSS variables \
                      the mount applied at the root.",
        usage: "useTheme(): { id: string; mode: 'light' | 'dark'; vars: Record<string, string> }",
        example: "const { mode, vars } = useTheme();\n\
                  const stroke = vars['--svc-color-accent'];",
        gotchas: &[
            "For styles, prefer `var(--svc-color-fg)` and friends in inline styles: they follow theme changes \
             without a re-render. Use `vars` only where CSS cannot reach, such as drawing on a canvas.",
            "Do not hard-code colours or fonts; the host may switch theme or mode at any time.",
        ],
    },
    StandardHook {
        hook: "useHostContext",
        description: "Returns what the host told the mount about where the card is shown: theme, displayMode \
                      (inline, fullscreen, pip), containerDimensions, locale, timeZone, platform and similar \
                      MCP-Apps host context fields. The component re-renders when the host reports a change.",
        usage: "useHostContext(): { theme?: string; displayMode?: string; containerDimensions?: { width?: number; \
                height?: number; maxWidth?: number; maxHeight?: number }; locale?: string; timeZone?: string; \
                [key: string]: unknown }",
        example: "const { locale, containerDimensions } = useHostContext();\n\
                  const narrow = (containerDimensions?.width ?? 640) < 480;",
        gotchas: &[
            "Every field is optional: hosts report different subsets, so always fall back to a default.",
            "It is read-only; the card cannot change the host's display mode through it.",
            "Pass `locale` to Intl APIs (toLocaleString, Intl.DateTimeFormat) rather than assuming English.",
        ],
    },
    StandardHook {
        hook: "useToolChannel",
        description: "Reads a streamSpec channel whose `source.tool` names an agent-side tool: the server \
                      calls that tool (every `source.intervalMs` when set) and delivers each result on the \
                      channel. `payload` is the latest result; `error` the latest failure message, or null.",
        usage: "useToolChannel<T>(channel: string): { payload: T | undefined; error: string | null }",
        example: "const { payload, error } = useToolChannel<{ price: number }>('quote');\n\
                  if (error) return <p role=\"alert\">{error}</p>;\n\
                  return <p>{payload ? payload.price : 'Loading...'}</p>;",
        gotchas: &[
            "Meant for channels declared with `source: { tool }` in streamSpec. useStream reads the same \
             channel as a list of results; useToolChannel adds the tool's error.",
            "`payload` is undefined until the first result arrives: render a loading state.",
            "An error does not clear the last good payload; show both when that helps the user.",
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SEVEN_HOOKS: [&str; 7] = [
        "useProps",
        "useAction",
        "useStream",
        "useContextSlot",
        "useTheme",
        "useHostContext",
        "useToolChannel",
    ];

    #[test]
    fn standard_package_has_the_seven_hooks_then_the_kit() {
        let package = standard_package();
        assert_eq!(package.package, STANDARD_PACKAGE);
        assert_eq!(package.version, "1.0.0");
        let hooks: Vec<&str> = package
            .exports
            .iter()
            .filter(|export| matches!(export.name, ExportName::Hook(_)))
            .map(|export| export.name.as_str())
            .collect();
        assert_eq!(hooks, SEVEN_HOOKS);
        let components: Vec<&str> = package
            .exports
            .iter()
            .filter(|export| matches!(export.name, ExportName::Component(_)))
            .map(|export| export.name.as_str())
            .collect();
        assert_eq!(components, ["ActionButton", "Chart", "DataTable", "StatusBadge"]);
    }

    #[test]
    fn every_standard_hook_is_documented_for_a_model() {
        for export in standard_package().exports {
            let name = export.name.as_str();
            assert!(
                export.description.as_deref().is_some_and(|text| text.len() > 40),
                "{name}"
            );
            assert!(
                export.usage.as_deref().is_some_and(|usage| usage.starts_with(name)),
                "{name}"
            );
            assert!(
                export.example.as_deref().is_some_and(|example| example.contains(name)),
                "{name}"
            );
            assert!(!export.gotchas.is_empty(), "{name}");
        }
    }

    #[test]
    fn standard_package_serializes_to_the_wire_shape() {
        let wire = serde_json::to_value(standard_package()).unwrap();
        assert_eq!(wire["package"], "@svc/gadgets");
        assert_eq!(wire["exports"][0]["hook"], "useProps");
        assert_eq!(wire["exports"][0]["usage"], "useProps<T>(): T");
        assert!(wire["exports"][0]["gotchas"].is_array());
        for absent in [
            "bundleUrl",
            "bundleHost",
            "bundleSri",
            "styleUrl",
            "connect",
            "requires",
            "typesUrl",
        ] {
            assert!(wire.get(absent).is_none(), "{absent}");
        }
        assert!(wire["exports"][0].get("permission").is_none());
    }

    #[test]
    fn declared_descriptor_round_trips_with_transport_fields() {
        let declared = json!({
            "package": "@acme/maps",
            "version": "2.1.0",
            "bundleUrl": "https://cdn.acme.test/maps.js",
            "bundleSri": "sha384-abc",
            "connect": ["https://tiles.acme.test"],
            "typesUrl": "https://cdn.acme.test/maps.d.ts",
            "exports": [
                { "component": "Map", "description": "A map", "gotchas": "needs a height", "required": true },
                { "hook": "useGeolocation", "permission": "location" }
            ]
        });
        let descriptor: GadgetDescriptor = serde_json::from_value(declared).unwrap();
        assert_eq!(descriptor.exports[0].name, ExportName::Component("Map".into()));
        assert_eq!(descriptor.exports[0].gotchas, vec!["needs a height"]);
        assert_eq!(
            descriptor.export("useGeolocation").unwrap().permission.as_deref(),
            Some("location")
        );
        let wire = serde_json::to_value(&descriptor).unwrap();
        assert_eq!(wire["bundleUrl"], "https://cdn.acme.test/maps.js");
        assert_eq!(wire["exports"][0]["component"], "Map");
        assert_eq!(wire["exports"][0]["gotchas"], json!(["needs a height"]));
        assert_eq!(wire["exports"][1]["hook"], "useGeolocation");
    }

    fn package(name: &str, version: &str) -> GadgetDescriptor {
        GadgetDescriptor::new(name, version, Vec::new())
    }

    #[test]
    fn layering_puts_the_standard_package_first_then_declared_in_order() {
        let layered = layer(
            standard_package(),
            vec![package("@acme/a", "1.0.0"), package("@acme/b", "1.0.0")],
        );
        let names: Vec<&str> = layered.iter().map(|d| d.package.as_str()).collect();
        assert_eq!(names, ["@svc/gadgets", "@acme/a", "@acme/b"]);
    }

    #[test]
    fn declared_package_wins_a_collision_with_the_standard_one() {
        let layered = layer(
            standard_package(),
            vec![package("@acme/a", "1.0.0"), package(STANDARD_PACKAGE, "9.9.9")],
        );
        assert_eq!(layered.len(), 2);
        assert_eq!(layered[0].package, STANDARD_PACKAGE);
        assert_eq!(layered[0].version, "9.9.9");
        assert_eq!(layered[1].package, "@acme/a");
    }

    #[test]
    fn later_declaration_of_the_same_package_wins() {
        let layered = layer(
            standard_package(),
            vec![package("@acme/a", "1.0.0"), package("@acme/a", "2.0.0")],
        );
        assert_eq!(layered.len(), 2);
        assert_eq!(layered[1].version, "2.0.0");
    }

    #[test]
    fn no_declarations_leave_the_floor() {
        assert_eq!(layer(standard_package(), Vec::new()), vec![standard_package()]);
    }
}
