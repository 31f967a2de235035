// The gallery's fixture contracts: real uses of a card, each with props a user would see. The
// built-in generator renders every one (gallery.mjs); docs/builtin-generator.md explains the
// meanings they lean on (money beside `currency`, `*_percent`, `format: time`, status enums).

const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'];
const CUSTOMERS = ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Katherine Johnson', 'Edsger Dijkstra'];

const orders = Array.from({ length: 20 }, (_, index) => ({
  order_id: `SO-${1040 + index}`,
  customer: CUSTOMERS[index % CUSTOMERS.length],
  placed_on: `2026-11-${String(1 + index).padStart(2, '0')}`,
  status: ORDER_STATUSES[index % ORDER_STATUSES.length],
  items: 1 + (index % 7),
  total: 120 + index * 37.25,
  currency: 'USD',
}));

export const FIXTURES = [
  {
    name: 'approval',
    intent: 'purchase approval',
    contract: {
      propsSpec: {
        type: 'object',
        required: ['title', 'status', 'amount', 'currency', 'lines'],
        properties: {
          title: { type: 'string' },
          status: { enum: ['pending', 'approved', 'rejected'] },
          requester: { type: 'string' },
          amount: { type: 'number' },
          currency: { type: 'string' },
          needed_by: { type: 'string', format: 'date' },
          justification: { type: 'string' },
          lines: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                sku: { type: 'string' },
                description: { type: 'string' },
                qty: { type: 'integer' },
                unit_price: { type: 'number', 'x-svc-hint': 'currency', 'x-svc-currency': 'USD' },
              },
            },
          },
        },
      },
      actionSpec: {
        approve: {},
        reject: { schema: { type: 'object', required: ['reason'], properties: { reason: { type: 'string' } } } },
      },
    },
    props: {
      title: 'Laptops for the design team',
      status: 'pending',
      requester: 'Grace Hopper',
      amount: 4312.5,
      currency: 'USD',
      needed_by: '2026-12-01',
      justification: 'Three designers start in December.\nTheir current machines are five years old.',
      lines: [
        { sku: 'MBP-14-M4', description: 'Laptop 14"', qty: 3, unit_price: 1299.5 },
        { sku: 'USB-C-HUB', description: 'Dock', qty: 3, unit_price: 138 },
      ],
    },
  },
  {
    name: 'orders-table',
    intent: 'open orders',
    contract: {
      propsSpec: {
        type: 'object',
        required: ['title', 'orders'],
        properties: {
          title: { type: 'string' },
          orders: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                order_id: { type: 'string' },
                customer: { type: 'string' },
                placed_on: { type: 'string', format: 'date' },
                status: { enum: ORDER_STATUSES },
                items: { type: 'integer' },
                total: { type: 'number' },
                currency: { type: 'string' },
              },
            },
          },
        },
      },
      actionSpec: {
        open_order: { schema: { type: 'object', required: ['order_id'], properties: { order_id: { type: 'string' } } } },
      },
    },
    props: { title: 'Open orders', orders },
  },
  {
    name: 'weekly-metrics',
    intent: 'weekly metrics',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          revenue_usd: { type: 'number' },
          orders: { type: 'integer' },
          conversion_rate: { type: 'number', maximum: 1 },
          change_percent: { type: 'number' },
          days: {
            type: 'array',
            items: { type: 'object', properties: { day: { type: 'string', format: 'date' }, revenue_usd: { type: 'number' }, visits: { type: 'integer' } } },
          },
        },
      },
    },
    props: {
      title: 'Week 47',
      revenue_usd: 18240.75,
      orders: 312,
      conversion_rate: 0.012,
      change_percent: -1.8,
      days: [
        { day: '2026-11-16', revenue_usd: 2410.5, visits: 3900 },
        { day: '2026-11-17', revenue_usd: 2804, visits: 4210 },
        { day: '2026-11-18', revenue_usd: 3120.25, visits: 4433 },
      ],
    },
  },
  {
    name: 'booking-form',
    intent: 'table booking',
    contract: {
      propsSpec: { type: 'object', properties: { title: { type: 'string' }, venue: { type: 'string' } } },
      actionSpec: {
        book: {
          description: 'Pick a time and tell us who is coming.',
          schema: {
            type: 'object',
            required: ['date', 'time', 'seating'],
            properties: {
              date: { type: 'string', format: 'date' },
              time: { type: 'string', format: 'time' },
              seating: { enum: ['inside', 'terrace', 'bar'] },
              contact: { type: 'object', properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' } } },
              guests: {
                type: 'array',
                items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, vegetarian: { type: 'boolean' } } },
              },
            },
          },
        },
        cancel: {},
      },
    },
    props: { title: 'Book a table', venue: 'Trattoria Roma' },
  },
  {
    name: 'checkout-steps',
    intent: 'checkout',
    contract: {
      propsSpec: {
        type: 'object',
        required: ['title', 'step', 'steps'],
        properties: {
          title: { type: 'string' },
          step: { type: 'integer', minimum: 1 },
          steps: { type: 'array', items: { type: 'string' } },
          items: { type: 'integer' },
          subtotal: { type: 'number' },
          currency: { type: 'string' },
        },
      },
      actionSpec: { back: {}, next: {} },
    },
    props: { title: 'Checkout', step: 1, steps: ['Cart', 'Shipping', 'Payment'], items: 3, subtotal: 89.9, currency: 'EUR' },
  },
  {
    name: 'live-log',
    intent: 'deploy log',
    contract: {
      propsSpec: { type: 'object', properties: { title: { type: 'string' }, status: { enum: ['running', 'done', 'failed'] } } },
      streamSpec: {
        log: { mode: 'append', schema: { type: 'object', properties: { level: { enum: ['info', 'warn', 'error'] }, message: { type: 'string' } } } },
      },
      actionSpec: { abort: {} },
    },
    props: { title: 'Deploying api v2.3.1', status: 'running' },
    emits: [
      { level: 'info', message: 'pulling image registry.example.com/api@sha256:9f2c4e1b7a0d3c6e8f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70' },
      { level: 'warn', message: 'readiness probe slow (2.1 s)' },
      { level: 'info', message: 'rollout complete' },
    ],
  },
  {
    name: 'ticket',
    intent: 'support ticket',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          priority: { enum: ['low', 'medium', 'high', 'urgent'] },
          status: { enum: ['open', 'waiting', 'resolved'] },
          reporter: { type: 'string', format: 'email' },
          opened_at: { type: 'string', format: 'date-time' },
          description: { type: 'string' },
          resolution: { type: 'string' },
        },
      },
      actionSpec: {
        reply: { schema: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } },
        close_ticket: {},
      },
    },
    props: {
      title: 'Export fails for large workspaces',
      priority: 'high',
      status: 'open',
      reporter: 'someone.with.a.really.long.address@customer-subdomain.example.com',
      opened_at: '2026-11-20T14:05:00Z',
      description:
        'Steps:\n1. Open a workspace with 12k items\n2. Export to CSV\n\nError token: ' +
        'ERR_EXPORT_0x7f3a9c2e1b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8',
      resolution: '',
    },
  },
  {
    name: 'checklist',
    intent: 'launch checklist',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          tasks: { type: 'array', items: { type: 'object', properties: { task: { type: 'string' }, owner: { type: 'string' }, done: { type: 'boolean' } } } },
        },
      },
      actionSpec: { mark_done: { schema: { type: 'object', required: ['task'], properties: { task: { enum: ['Docs', 'Pricing page', 'Status page', 'Changelog', 'Support macros'] } } } } },
    },
    props: {
      title: 'Launch checklist',
      tasks: [
        { task: 'Docs', owner: 'Ada', done: true },
        { task: 'Pricing page', owner: 'Grace', done: false },
        { task: 'Status page', owner: 'Alan', done: false },
      ],
    },
  },
  {
    name: 'agenda',
    intent: 'meeting agenda',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          day: { type: 'string', format: 'date' },
          slots: { type: 'array', items: { type: 'object', properties: { starts_at: { type: 'string', format: 'time' }, topic: { type: 'string' }, room: { type: 'string' } } } },
        },
      },
    },
    props: {
      title: 'Quarterly planning',
      day: '2026-12-03',
      slots: [
        { starts_at: '09:30:00Z', topic: 'Welcome and goals', room: 'Atlas' },
        { starts_at: '10:15:00Z', topic: 'Roadmap review', room: 'Atlas' },
        { starts_at: '13:00:00Z', topic: 'Team breakouts', room: 'Orion' },
      ],
    },
  },
  {
    name: 'file-list',
    intent: 'shared files',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          files: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                name: { type: 'string' },
                size: { type: 'number', 'x-svc-hint': 'unit', 'x-svc-unit': 'megabyte' },
                modified: { type: 'string', format: 'date-time' },
                link: { type: 'string', format: 'uri' },
              },
            },
          },
        },
      },
      actionSpec: { delete_file: { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } },
    },
    props: {
      title: 'Shared with you',
      files: [
        { name: 'Q4-board-deck-final-final-v7-reviewed-by-legal.pdf', size: 12.4, modified: '2026-11-19T09:12:00Z', link: 'https://files.example.com/d/q4' },
        { name: 'roadmap.xlsx', size: 0.8, modified: '2026-11-18T16:40:00Z', link: 'https://files.example.com/d/rm' },
      ],
    },
  },
  {
    name: 'comparison',
    intent: 'plan comparison',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          plans: { type: 'array', items: { type: 'object', properties: { plan: { type: 'string' }, price: { type: 'number' }, currency: { type: 'string' }, seats: { type: 'integer' }, sso: { type: 'boolean' } } } },
        },
      },
      actionSpec: { choose_plan: { schema: { type: 'object', required: ['plan'], properties: { plan: { enum: ['Starter', 'Team', 'Enterprise'] } } } } },
    },
    props: {
      title: 'Pick a plan',
      plans: [
        { plan: 'Starter', price: 0, currency: 'EUR', seats: 3, sso: false },
        { plan: 'Team', price: 49, currency: 'EUR', seats: 25, sso: false },
        { plan: 'Enterprise', price: 499, currency: 'EUR', seats: 500, sso: true },
      ],
    },
  },
  {
    name: 'error-state',
    intent: 'sync failed',
    contract: {
      propsSpec: {
        type: 'object',
        properties: { title: { type: 'string' }, status: { enum: ['failed'] }, code: { type: 'string' }, message: { type: 'string' } },
      },
      actionSpec: { retry: {}, cancel_sync: {} },
    },
    props: {
      title: 'Calendar sync failed',
      status: 'failed',
      code: 'E_TOKEN_EXPIRED',
      message: 'The calendar provider refused our token.\nReconnect the account, then retry.',
    },
  },
  {
    name: 'chat-transcript',
    intent: 'support chat',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          messages: {
            type: 'array',
            items: { type: 'object', properties: { author: { type: 'string' }, sent_at: { type: 'string', format: 'date-time' }, message: { type: 'string' } } },
          },
        },
      },
      actionSpec: { reply: { schema: { type: 'object', required: ['message'], properties: { message: { type: 'string', maxLength: 2000 } } } } },
    },
    props: {
      title: 'Chat with Grace',
      messages: [
        { author: 'Grace', sent_at: '2026-11-24T10:02:00Z', message: 'Hi! My invoice shows two charges for November.' },
        { author: 'Agent', sent_at: '2026-11-24T10:03:00Z', message: 'Sorry about that. I can see both charges.\nOne of them is a pre-authorisation and will drop off within 3 days.' },
        { author: 'Grace', sent_at: '2026-11-24T10:05:00Z', message: 'Thanks, that helps.' },
      ],
    },
  },
  {
    name: 'invoice',
    intent: 'invoice to pay',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          status: { enum: ['draft', 'due', 'overdue', 'paid'] },
          due_on: { type: 'string', format: 'date' },
          currency: { type: 'string' },
          subtotal: { type: 'number' },
          tax: { type: 'number' },
          total: { type: 'number' },
          lines: {
            type: 'array',
            items: { type: 'object', properties: { item: { type: 'string' }, hours: { type: 'number' }, rate: { type: 'number', 'x-svc-hint': 'currency', 'x-svc-currency': 'EUR' } } },
          },
        },
      },
      actionSpec: { pay: {}, dispute: { schema: { type: 'object', required: ['reason'], properties: { reason: { type: 'string' } } } } },
    },
    props: {
      title: 'Invoice 2026-118',
      status: 'overdue',
      due_on: '2026-11-15',
      currency: 'EUR',
      subtotal: 3150,
      tax: 598.5,
      total: 3748.5,
      lines: [
        { item: 'Design review', hours: 12, rate: 150 },
        { item: 'Implementation', hours: 9, rate: 150 },
      ],
    },
  },
  {
    name: 'kpi-dashboard',
    intent: 'service health',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          requests: { type: 'integer' },
          requests_trend: { type: 'array', items: { type: 'integer' } },
          error_rate: { type: 'number', maximum: 1 },
          error_rate_trend: { type: 'array', items: { type: 'number' } },
          p95_latency: { type: 'number', 'x-svc-hint': 'unit', 'x-svc-unit': 'millisecond' },
          latency_history: { type: 'array', items: { type: 'number' } },
        },
      },
    },
    props: {
      title: 'API health, last 7 days',
      requests: 1284000,
      requests_trend: [160000, 171000, 182500, 179000, 190200, 198000, 203300],
      error_rate: 0.0042,
      error_rate_trend: [0.0061, 0.0052, 0.0049, 0.0047, 0.0044, 0.0043, 0.0042],
      p95_latency: 182,
      latency_history: [240, 231, 210, 205, 198, 190, 182],
    },
  },
  {
    name: 'shipment',
    intent: 'shipment tracking',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          status: { enum: ['label created', 'in transit', 'out for delivery', 'delivered', 'delayed'] },
          carrier: { type: 'string' },
          tracking_url: { type: 'string', format: 'uri' },
          expected_on: { type: 'string', format: 'date' },
          events: {
            type: 'array',
            items: { type: 'object', properties: { at: { type: 'string', format: 'date-time' }, place: { type: 'string' }, event: { type: 'string' } } },
          },
        },
      },
      actionSpec: { change_delivery: { schema: { type: 'object', required: ['deliver_on'], properties: { deliver_on: { type: 'string', format: 'date' }, leave_with_neighbour: { type: 'boolean' } } } } },
    },
    props: {
      title: 'Parcel 1Z999AA10123456784',
      status: 'in transit',
      carrier: 'UPS',
      tracking_url: 'https://track.example.com/1Z999AA10123456784',
      expected_on: '2026-11-28',
      events: [
        { at: '2026-11-24T08:10:00Z', place: 'Lyon, FR', event: 'Picked up' },
        { at: '2026-11-25T02:44:00Z', place: 'Paris, FR', event: 'Departed facility' },
      ],
    },
  },
  {
    name: 'signup-form',
    intent: 'workspace signup',
    contract: {
      propsSpec: { type: 'object', properties: { title: { type: 'string' }, plan: { type: 'string' } } },
      actionSpec: {
        create_workspace: {
          description: 'The workspace handle is 3 to 20 lowercase letters, digits or dashes.',
          schema: {
            type: 'object',
            required: ['handle', 'email', 'region'],
            properties: {
              handle: { type: 'string', pattern: '^[a-z0-9-]{3,20}$' },
              email: { type: 'string', format: 'email' },
              region: { enum: ['eu-west', 'us-east', 'ap-south', 'sa-east', 'me-central'] },
              seats: { type: 'integer', minimum: 1, maximum: 500, default: 5 },
              newsletter: { type: 'boolean' },
            },
          },
        },
      },
    },
    props: { title: 'Create your workspace', plan: 'Team' },
  },
  {
    name: 'team-roster',
    intent: 'on-call roster',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          people: {
            type: 'array',
            items: { type: 'object', properties: { person: { type: 'string' }, role: { type: 'string' }, email: { type: 'string', format: 'email' }, on_call: { type: 'boolean' } } },
          },
        },
      },
      actionSpec: { page_person: { schema: { type: 'object', required: ['email'], properties: { email: { type: 'string', format: 'email' } } } } },
    },
    props: {
      title: 'Platform on-call',
      people: [
        { person: 'Ada Lovelace', role: 'Primary', email: 'ada@example.com', on_call: true },
        { person: 'Alan Turing', role: 'Secondary', email: 'alan@example.com', on_call: true },
        { person: 'Grace Hopper', role: 'Escalation', email: 'grace@example.com', on_call: false },
      ],
    },
  },
  {
    name: 'incident',
    intent: 'incident',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          severity: { enum: ['sev1', 'sev2', 'sev3'] },
          status: { enum: ['investigating', 'identified', 'monitoring', 'resolved'] },
          started_at: { type: 'string', format: 'date-time' },
          affected: { type: 'array', items: { type: 'string' } },
          summary: { type: 'string' },
        },
      },
      actionSpec: { acknowledge: {}, resolve: {}, escalate: {}, page_oncall: {} },
    },
    props: {
      title: 'Checkout errors in EU',
      severity: 'sev2',
      status: 'investigating',
      started_at: '2026-11-25T07:58:00Z',
      affected: ['checkout-api', 'payments-eu'],
      summary: '5% of checkout requests in eu-west fail with 502 since 07:58 UTC.',
    },
  },
  {
    name: 'event-rsvp',
    intent: 'event invitation',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          starts_at: { type: 'string', format: 'date-time' },
          ends_at: { type: 'string', format: 'date-time' },
          location: { type: 'string' },
          organiser: { type: 'string' },
          details: { type: 'string' },
        },
      },
      actionSpec: {
        accept: {},
        decline: {},
        propose_time: { schema: { type: 'object', required: ['date', 'time'], properties: { date: { type: 'string', format: 'date' }, time: { type: 'string', format: 'time' } } } },
      },
    },
    props: {
      title: 'Design review: checkout v3',
      starts_at: '2026-12-02T14:00:00Z',
      ends_at: '2026-12-02T15:00:00Z',
      location: 'Room Atlas / video link in the invite',
      organiser: 'Katherine Johnson',
      details: 'Bring the latest prototype.\nWe decide on the payment step layout.',
    },
  },
  {
    name: 'empty-state',
    intent: 'open pull requests',
    contract: {
      propsSpec: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          pull_requests: {
            type: 'array',
            items: { type: 'object', properties: { number: { type: 'integer' }, pr_title: { type: 'string' }, author: { type: 'string' }, state: { enum: ['open', 'draft', 'merged'] } } },
          },
          labels: { type: 'array', items: { type: 'string' } },
        },
      },
      actionSpec: { refresh: {} },
    },
    props: { title: 'Pull requests waiting for you', pull_requests: [], labels: [] },
  },
];
