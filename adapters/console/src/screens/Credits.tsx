// Credits (hosted only): the balance, lifetime figures, spend over time and the ledger, a page
// at a time.

import { useCallback, useEffect, useState } from 'react';

import type { ScreenProps } from '../App';
import { callTool } from '../api';
import { TOOLS, type CreditTransaction, type Wallet } from '../tools';
import { Busy, Empty, ErrorText, formatCents, formatTime, useAction } from '../ui';
import { SpendChart } from './SpendChart';

const PAGE = 20;

export function CreditsScreen({ tools }: ScreenProps) {
  const [wallet, setWallet] = useState<Wallet | null>(null);
  const [rows, setRows] = useState<CreditTransaction[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const canList = tools.includes(TOOLS.creditTransactions);
  const loadPage = useAction(
    useCallback(
      async (from: string | null) => {
        const args: Record<string, unknown> = { limit: PAGE };
        if (from) args.cursor = from;
        const page = await callTool<{ transactions: CreditTransaction[]; nextCursor?: string }>(
          TOOLS.creditTransactions,
          args,
        );
        setRows((all) => (from ? [...(all ?? []), ...page.transactions] : page.transactions));
        setCursor(page.nextCursor ?? null);
      },
      [],
    ),
  );
  const loadWallet = useAction(
    useCallback(async () => setWallet(await callTool<Wallet>(TOOLS.creditBalance)), []),
  );
  const { run: runWallet } = loadWallet;
  const { run: runPage } = loadPage;
  useEffect(() => {
    void runWallet();
    if (canList) void runPage(null);
  }, [runWallet, runPage, canList]);
  return (
    <>
      <ErrorText id="wallet-error" error={loadWallet.error} />
      {wallet === null && !loadWallet.error && <Busy label="Loading the wallet…" />}
      {wallet && (
        <dl className="figures">
          <div>
            <dt>Balance</dt>
            <dd>{formatCents(wallet.balanceCents)}</dd>
          </div>
          <div>
            <dt>Granted, all time</dt>
            <dd>{formatCents(wallet.lifetimeGrantedCents)}</dd>
          </div>
          <div>
            <dt>Spent, all time</dt>
            <dd>{formatCents(wallet.lifetimeSpentCents)}</dd>
          </div>
        </dl>
      )}
      {canList && (
        <>
          <h3>Spend per day</h3>
          {rows && <SpendChart rows={rows} />}
          <h3>Ledger</h3>
          {rows?.length === 0 && <Empty>No transactions yet: redeem a coupon to add credit.</Empty>}
          <ul className="rows" aria-label="Ledger">
            {rows?.map((t) => (
              <li key={t.transactionId}>
                <span>
                  {formatTime(t.createdAt)} · {t.kind} · {t.reason}
                </span>
                <strong className={t.deltaCents < 0 ? 'spent' : 'granted'}>
                  {t.deltaCents > 0 ? '+' : ''}
                  {formatCents(t.deltaCents)}
                </strong>
              </li>
            ))}
          </ul>
          {cursor && (
            <button type="button" onClick={() => void loadPage.run(cursor)} disabled={loadPage.running}>
              {loadPage.running ? 'Loading…' : 'Load older transactions'}
            </button>
          )}
          <ErrorText id="ledger-error" error={loadPage.error} />
        </>
      )}
    </>
  );
}
