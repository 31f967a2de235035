// Orgs and invites: create an org, invite by email with a role, see each invite's status (the
// invites svc_ops_list_orgs lists for the orgs you administer), revoke a pending one.

import { useCallback, useState } from 'react';

import type { ScreenProps } from '../App';
import { callTool } from '../api';
import { TOOLS, type Invite, type OrgInvite, type OrgMembership } from '../tools';
import { Busy, ConfirmButton, Empty, ErrorText, formatTime, useAction } from '../ui';
import { useList } from './useList';

export function OrgsScreen(_: ScreenProps) {
  const orgs = useList(useCallback(async () => (await callTool<{ orgs: OrgMembership[] }>(TOOLS.listOrgs)).orgs, []));
  const [name, setName] = useState('');
  const create = useAction(
    useCallback(async () => {
      await callTool(TOOLS.createOrg, { name });
      setName('');
      await orgs.reload();
    }, [name, orgs]),
  );
  return (
    <>
      <p className="lead">An org shares a wallet among its members. Owners and admins invite people by email.</p>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <label htmlFor="org-name">New org name</label>
        <input
          id="org-name"
          value={name}
          required
          onChange={(e) => setName(e.target.value)}
          aria-describedby="org-name-error"
          aria-invalid={create.error ? true : undefined}
        />
        <button type="submit" disabled={create.running}>
          {create.running ? 'Creating…' : 'Create org'}
        </button>
        <ErrorText id="org-name-error" error={create.error} />
      </form>
      {orgs.error && <p className="error">{orgs.error}</p>}
      {orgs.items === null && !orgs.error && <Busy label="Loading orgs…" />}
      {orgs.items?.length === 0 && <Empty>You are in no org yet: create one above, then invite your team.</Empty>}
      <ul className="cards">
        {orgs.items?.map((org) => (
          <OrgCard key={org.orgId} org={org} onChanged={orgs.reload} />
        ))}
      </ul>
    </>
  );
}

function OrgCard({ org, onChanged }: { org: OrgMembership; onChanged: () => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const [reused, setReused] = useState<string | null>(null);
  const invites = org.invites ?? [];
  const id = org.orgId;
  const invite = useAction(
    useCallback(async () => {
      const sent = await callTool<Invite>(TOOLS.inviteToOrg, { orgId: id, email, role });
      setReused(sent.reused ? sent.email : null);
      setEmail('');
      await onChanged();
    }, [id, email, role, onChanged]),
  );
  const canInvite = org.role === 'owner' || org.role === 'admin';
  return (
    <li className="card" aria-labelledby={`org-${id}-title`}>
      <h3 id={`org-${id}-title`}>
        {org.name} <span className="badge">{org.role}</span>
      </h3>
      <p className="meta">
        <code>{id}</code> · joined {formatTime(org.joinedAt)}
      </p>
      {canInvite && (
        <form
          className="grid-form"
          onSubmit={(e) => {
            e.preventDefault();
            void invite.run();
          }}
        >
          <label htmlFor={`org-${id}-email`}>Invite by email</label>
          <input
            id={`org-${id}-email`}
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            aria-describedby={`org-${id}-invite-error`}
            aria-invalid={invite.error ? true : undefined}
          />
          <label htmlFor={`org-${id}-role`}>Role</label>
          <select id={`org-${id}-role`} value={role} onChange={(e) => setRole(e.target.value)}>
            <option value="member">Member</option>
            <option value="admin">Admin</option>
          </select>
          <button type="submit" disabled={invite.running}>
            {invite.running ? 'Inviting…' : 'Send invite'}
          </button>
          <p role="status" className="meta">
            {reused ? `${reused} already has a pending invite: no second email was sent.` : ''}
          </p>
          <ErrorText id={`org-${id}-invite-error`} error={invite.error} />
        </form>
      )}
      {canInvite && invites.length === 0 && <Empty>No invites yet: invite someone by email above.</Empty>}
      {invites.length > 0 && (
        <ul className="rows" aria-label={`Invites of ${org.name}`}>
          {invites.map((i) => (
            <InviteRow key={i.inviteId} invite={i} onRevoked={onChanged} />
          ))}
        </ul>
      )}
    </li>
  );
}

function InviteRow({ invite, onRevoked }: { invite: OrgInvite; onRevoked: () => Promise<void> }) {
  const revoke = useAction(
    useCallback(async () => {
      await callTool(TOOLS.revokeInvite, { inviteId: invite.inviteId });
      await onRevoked();
    }, [invite.inviteId, onRevoked]),
  );
  return (
    <li>
      <span>
        {invite.email} as {invite.role}: <strong>{invite.status}</strong>
        {invite.status === 'pending' ? `, expires ${formatTime(invite.expiresAt)}` : `, sent ${formatTime(invite.createdAt)}`}
      </span>
      {invite.status === 'pending' && (
        <ConfirmButton
          label="Revoke invite"
          question={`Revoke the invite to ${invite.email}?`}
          confirmLabel="Yes, revoke"
          running={revoke.running}
          onConfirm={() => void revoke.run()}
        />
      )}
      <ErrorText id={`invite-${invite.inviteId}-error`} error={revoke.error} />
    </li>
  );
}
