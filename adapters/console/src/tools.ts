// The /ops tool names and the records they answer (docs/ops.md).

export const TOOLS = {
  listApps: 'svc_ops_list_apps',
  createApp: 'svc_ops_create_app',
  renameApp: 'svc_ops_rename_app',
  deleteApp: 'svc_ops_delete_app',
  setDefaultApp: 'svc_ops_set_default_app',
  updateSystemPrompt: 'svc_ops_update_app_system_prompt',
  listOrgs: 'svc_ops_list_orgs',
  createOrg: 'svc_ops_create_org',
  inviteToOrg: 'svc_ops_invite_to_org',
  revokeInvite: 'svc_ops_revoke_invite',
  listKeys: 'svc_ops_list_connector_keys',
  issueKey: 'svc_ops_issue_connector_key',
  revokeKey: 'svc_ops_revoke_connector_key',
  redeemCoupon: 'svc_ops_redeem_coupon',
  listBlueprints: 'svc_ops_list_blueprints',
  registerBlueprint: 'svc_ops_register_blueprint',
  updateBlueprint: 'svc_ops_update_blueprint',
  deleteBlueprint: 'svc_ops_delete_blueprint',
  listProviderKeys: 'svc_ops_list_provider_keys',
  setProviderKey: 'svc_ops_set_provider_key',
  removeProviderKey: 'svc_ops_remove_provider_key',
  creditBalance: 'svc_ops_get_credit_balance',
  creditTransactions: 'svc_ops_list_credit_transactions',
} as const;

/** Document 3's limit on an app's system prompt. */
export const SYSTEM_PROMPT_LIMIT = 10_000;

export interface App {
  appId: string;
  displayName: string;
  createdAt: string;
  updatedAt: string;
  systemPrompt?: string;
}

export interface ConnectorKey {
  id: string;
  apiKeyPrefix: string;
  name?: string;
  appId?: string;
  status: string;
  createdAt: string;
  lastUsedAt?: string;
  expiresAt?: string;
}

export interface OrgMembership {
  orgId: string;
  name: string;
  ownerUserId: string;
  role: string;
  joinedAt: string;
  /** The org's invites, newest first: present where the caller is an owner or admin. */
  invites?: OrgInvite[];
}

export interface OrgInvite {
  inviteId: string;
  email: string;
  role: string;
  status: string;
  expiresAt: string;
  createdAt: string;
}

export interface Invite {
  inviteId: string;
  orgId: string;
  email: string;
  role: string;
  status: string;
  expiresAt: string;
  reused: boolean;
}

export interface Blueprint {
  blueprintId: string;
  contractHash: string;
  generator: string;
  isOperatorDefault: boolean;
  createdAt: string;
  intent?: string;
  description?: string;
  persona?: string;
  aesthetic?: string;
  /** Free-form hints (`tone`, `density`, ...): merged by svc_ops_update_blueprint. */
  variance: Record<string, unknown> | null;
  fixtureProps?: unknown;
  /** A compiled module is stored: the gallery can mount it. */
  mountable: boolean;
}

export interface RegisteredBlueprint {
  blueprintId: string;
  codeHash: string;
}

export interface ProviderKey {
  provider: string;
  label?: string;
  lastFour: string;
  createdAt: string;
  lastUsedAt?: string;
}

export interface Wallet {
  balanceCents: number;
  lifetimeGrantedCents: number;
  lifetimeSpentCents: number;
  updatedAt: string;
}

export interface CreditTransaction {
  transactionId: string;
  kind: string;
  deltaCents: number;
  balanceAfterCents: number;
  reason: string;
  createdAt: string;
}
