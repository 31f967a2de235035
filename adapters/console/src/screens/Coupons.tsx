// Coupons: redeem a code into your wallet or an org's.

import { useCallback, useState } from 'react';

import type { ScreenProps } from '../App';
import { callTool } from '../api';
import { TOOLS, type OrgMembership } from '../tools';
import { ErrorText, formatCents, useAction } from '../ui';
import { useList } from './useList';

interface Receipt {
  couponCode: string;
  creditCents: number;
  redeemedByPrincipalType: string;
  redeemedByPrincipalId: string;
}

export function CouponsScreen({ tools }: ScreenProps) {
  const canListOrgs = tools.includes(TOOLS.listOrgs);
  const orgs = useList(
    useCallback(
      async () => (canListOrgs ? (await callTool<{ orgs: OrgMembership[] }>(TOOLS.listOrgs)).orgs : []),
      [canListOrgs],
    ),
  );
  const [code, setCode] = useState('');
  const [target, setTarget] = useState('');
  const [receipt, setReceipt] = useState<Receipt | null>(null);
  const redeem = useAction(
    useCallback(async () => {
      setReceipt(null);
      const args: Record<string, unknown> = { couponCode: code.trim() };
      if (target) args.targetOrgId = target;
      setReceipt(await callTool<Receipt>(TOOLS.redeemCoupon, args));
      setCode('');
    }, [code, target]),
  );
  return (
    <>
      <p className="lead">
        A coupon code (<code>cpn_</code> and 8 letters or digits) adds credit once. The operator issues codes with{' '}
        <code>svc coupons issue</code>.
      </p>
      <form
        className="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          void redeem.run();
        }}
      >
        <label htmlFor="coupon-code">Coupon code</label>
        <input
          id="coupon-code"
          required
          value={code}
          placeholder="cpn_AbCd1234"
          onChange={(e) => setCode(e.target.value)}
          aria-describedby="coupon-error"
          aria-invalid={redeem.error ? true : undefined}
        />
        {canListOrgs && (
          <>
            <label htmlFor="coupon-target">Into the wallet of</label>
            <select id="coupon-target" value={target} onChange={(e) => setTarget(e.target.value)}>
              <option value="">You</option>
              {orgs.items?.map((o) => (
                <option key={o.orgId} value={o.orgId}>
                  {o.name}
                </option>
              ))}
            </select>
          </>
        )}
        <button type="submit" disabled={redeem.running}>
          {redeem.running ? 'Redeeming…' : 'Redeem'}
        </button>
        <ErrorText id="coupon-error" error={redeem.error} />
      </form>
      {receipt && (
        <p className="success" role="status">
          Redeemed {receipt.couponCode}: {formatCents(receipt.creditCents)} added to the wallet of{' '}
          {receipt.redeemedByPrincipalType} {receipt.redeemedByPrincipalId}.
        </p>
      )}
    </>
  );
}
