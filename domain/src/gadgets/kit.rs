//! The kit: components of the standard package `@svc/gadgets`, drawn the way the built-in
//! generator draws (adapters/mount/src/kit/, typed by adapters/mount/gadgets.d.ts). The texts are
//! written for a language model writing a card: `svc_list_gadgets` shows them and a generator's
//! prompt quotes them.

use super::{ExportName, GadgetExport};

pub(super) struct KitComponent {
    component: &'static str,
    description: &'static str,
    usage: &'static str,
    example: &'static str,
    gotchas: &'static [&'static str],
}

impl KitComponent {
    pub(super) fn to_export(&self) -> GadgetExport {
        GadgetExport {
            name: ExportName::Component(self.component.to_string()),
            description: Some(self.description.to_string()),
            usage: Some(self.usage.to_string()),
            example: Some(self.example.to_string()),
            gotchas: self.gotchas.iter().map(|gotcha| (*gotcha).to_string()).collect(),
            permission: None,
            required: None,
        }
    }
}

pub(super) const COMPONENTS: &[KitComponent] = &[
    KitComponent {
        component: "ActionButton",
        description: "A button that sends one actionSpec intent: styled by tone, disabled while the server has \
                      not answered (a double click sends once), then shows \"Sent\", or the server's reason \
                      when it refused the data.",
        usage: "ActionButton(props: { intent: string; data?: unknown; tone?: 'primary' | 'secondary' | 'danger'; \
                children: ReactNode; onOutcome?: (outcome: ActionOutcome) => void })",
        example: "<ActionButton intent=\"approve\" tone=\"primary\">Approve</ActionButton>\n\
                  <ActionButton intent=\"reject\" tone=\"danger\" data={{ reason }}>Reject</ActionButton>",
        gotchas: &[
            "One primary action per card; reject, delete and cancel are `danger`; at most two buttons at the bottom.",
            "Use onOutcome to show `violations` (JSON Pointers such as `/date`) on the fields they name.",
        ],
    },
    KitComponent {
        component: "Chart",
        description: "A bar chart, a line chart or a sparkline as accessible SVG: one image whose label names \
                      every point, a tooltip per point, coloured by the theme.",
        usage: "Chart(props: { kind: 'bar' | 'line' | 'sparkline'; label: string; points: { label: string; \
                value: number }[]; format?: (value: number) => string })",
        example: "<Chart kind=\"line\" label=\"Revenue per day\" points={days.map((d) => ({ label: d.day, value: d.revenue }))} />",
        gotchas: &[
            "Lines for series over time, bars for categories, a sparkline beside a KPI's number.",
            "Keep the numbers on the card too (a DataTable or a list): the chart is not the only way to read them.",
            "Nothing is drawn for fewer than two points.",
        ],
    },
    KitComponent {
        component: "DataTable",
        description: "Rows of objects as a table with right-aligned tabular numbers while every column fits the \
                      card, and a stacked list with every column labelled when the card is narrower: no column \
                      hides behind a horizontal scroll.",
        usage: "DataTable<Row>(props: { rows: Row[]; columns: { label: string; numeric?: boolean; cell: (row: Row) \
                => ReactNode }[]; empty?: string })",
        example: "<DataTable rows={orders} columns={[{ label: 'Order', cell: (o) => o.id }, { label: 'Total', \
                  numeric: true, cell: (o) => money(o.total) }]} />",
        gotchas: &["Format cells for people (Intl money, dates); the table only aligns them."],
    },
    KitComponent {
        component: "StatusBadge",
        description: "A status word as a badge coloured by its meaning: rejected/failed/overdue danger, \
                      approved/done/paid success, pending/open/in review accent, anything else muted.",
        usage: "StatusBadge(props: { value: string; tone?: 'danger' | 'success' | 'accent' | 'muted' })",
        example: "<StatusBadge value={props.status} />",
        gotchas: &["Pass `tone` when the word alone does not say it; `statusTone(word)` gives the default."],
    },
];
