use std::sync::Arc;

use serde::Serialize;
use svc_domain::wallet::{
    InvalidPageLimit, LedgerEntry, LedgerPageLimit, Principal, PrincipalType, TransactionKind, Wallet, WalletError,
    WalletMovement,
};

use super::INTERNAL_ERROR_CODE;
use crate::ports::operator::{LedgerPosition, TransitionError, WalletRepository};
use crate::ports::{Clock, Ids, RepositoryError};

/// The two ways credit is granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantKind {
    FreeCredit,
    Topup,
}

impl GrantKind {
    fn transaction_kind(self) -> TransactionKind {
        match self {
            Self::FreeCredit => TransactionKind::FreeCredit,
            Self::Topup => TransactionKind::Topup,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantCredit {
    pub principal: Principal,
    pub kind: GrantKind,
    pub amount_cents: i64,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListCreditTransactions {
    pub principal: Principal,
    /// 1 to 100, default 20.
    pub limit: Option<u32>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// `svc_ops_list_credit_transactions`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreditTransactionsPage {
    pub transactions: Vec<LedgerEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CreditServiceError {
    #[error(transparent)]
    Wallet(#[from] WalletError),
    #[error(transparent)]
    InvalidLimit(#[from] InvalidPageLimit),
    #[error("not a cursor of this listing")]
    InvalidCursor,
    #[error("storage failure")]
    Storage(#[from] RepositoryError),
}

impl CreditServiceError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Wallet(error) => error.code(),
            Self::InvalidLimit(_) => "invalid_limit",
            Self::InvalidCursor => "invalid_cursor",
            Self::Storage(_) => INTERNAL_ERROR_CODE,
        }
    }
}

impl From<TransitionError<WalletError>> for CreditServiceError {
    fn from(error: TransitionError<WalletError>) -> Self {
        match error {
            TransitionError::Rejected(error) => Self::Wallet(error),
            TransitionError::Repository(error) => Self::Storage(error),
        }
    }
}

/// Credit wallets and their ledger.
pub struct CreditService {
    wallets: Arc<dyn WalletRepository>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    /// The one-time `free_credit` grant of a user's wallet on first use (hosted); 0: none.
    free_credit_cents: i64,
}

impl CreditService {
    pub fn new(wallets: Arc<dyn WalletRepository>, clock: Arc<dyn Clock>, ids: Arc<dyn Ids>) -> Self {
        Self {
            wallets,
            clock,
            ids,
            free_credit_cents: 0,
        }
    }

    /// Grants `cents` of `free_credit` once to every user wallet, on its first use.
    pub fn with_free_credit(mut self, cents: i64) -> Self {
        self.free_credit_cents = cents;
        self
    }

    /// The first use of a user's wallet: the one-time `free_credit` grant, if the deployment
    /// gives one and the user never had it. Org wallets start empty (Document 3).
    pub async fn welcome(&self, principal: &Principal) -> Result<(), CreditServiceError> {
        if self.free_credit_cents <= 0 || principal.principal_type != PrincipalType::User {
            return Ok(());
        }
        let movement = WalletMovement {
            transaction_id: self.ids.ulid(),
            kind: TransactionKind::FreeCredit,
            amount_cents: self.free_credit_cents,
            reason: "free credit on first use".into(),
            related_session_id: None,
        };
        self.wallets.apply_once(principal, movement, self.clock.now()).await?;
        Ok(())
    }

    /// The principal's wallet; one that never moved reads as an empty wallet.
    pub async fn balance(&self, principal: &Principal) -> Result<Wallet, CreditServiceError> {
        let stored = self.wallets.get(principal).await?;
        Ok(stored.unwrap_or_else(|| Wallet::open(principal.clone(), self.clock.now())))
    }

    /// One page of the principal's transactions, newest first.
    pub async fn list_transactions(
        &self,
        command: ListCreditTransactions,
    ) -> Result<CreditTransactionsPage, CreditServiceError> {
        let limit = LedgerPageLimit::new(command.limit)?;
        let before = command.cursor.as_deref().map(decode_cursor).transpose()?;
        let page = self
            .wallets
            .list_ledger(&command.principal, limit.get(), before)
            .await?;
        Ok(CreditTransactionsPage {
            transactions: page.entries,
            next_cursor: page.next_before.map(|position| position.to_string()),
        })
    }

    /// Gives credit (`svc credits grant`). Renders are charged and refunded through their
    /// reservations (`services::hosted::credit_reservations`), never here.
    pub async fn grant(&self, command: GrantCredit) -> Result<LedgerEntry, CreditServiceError> {
        let movement = WalletMovement {
            transaction_id: self.ids.ulid(),
            kind: command.kind.transaction_kind(),
            amount_cents: command.amount_cents,
            reason: command.reason,
            related_session_id: None,
        };
        let (_, entry) = self
            .wallets
            .apply(&command.principal, movement, self.clock.now())
            .await?;
        Ok(entry)
    }
}

/// Cursors are the decimal ledger position; anything else was not handed out by us.
fn decode_cursor(cursor: &str) -> Result<LedgerPosition, CreditServiceError> {
    match cursor.parse::<LedgerPosition>() {
        Ok(position) if position > 0 && position.to_string() == cursor => Ok(position),
        _ => Err(CreditServiceError::InvalidCursor),
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use super::*;
    use crate::testing::OperatorFakes;

    fn user() -> Principal {
        Principal::user("u1")
    }

    fn grant(amount: i64) -> GrantCredit {
        GrantCredit {
            principal: user(),
            kind: GrantKind::Topup,
            amount_cents: amount,
            reason: "topup".into(),
        }
    }

    #[tokio::test]
    async fn an_untouched_wallet_reads_as_empty() {
        let fakes = OperatorFakes::new();
        let wallet = fakes.credit_service().balance(&user()).await.unwrap();
        assert_eq!(
            (
                wallet.balance_cents,
                wallet.lifetime_granted_cents,
                wallet.lifetime_spent_cents
            ),
            (0, 0, 0)
        );
    }

    #[tokio::test]
    async fn a_user_wallet_gets_its_free_credit_once_and_an_org_wallet_none() {
        let fakes = OperatorFakes::new();
        let service = fakes.credit_service().with_free_credit(250);
        service.welcome(&user()).await.unwrap();
        service.welcome(&user()).await.unwrap();
        service.grant(grant(10)).await.unwrap();
        service.welcome(&user()).await.unwrap();
        let ledger = fakes.store.ledger_of(&user());
        let kinds: Vec<_> = ledger.iter().map(|e| (e.kind, e.delta_cents)).collect();
        assert_eq!(
            kinds,
            vec![(TransactionKind::FreeCredit, 250), (TransactionKind::Topup, 10)]
        );
        let org = Principal::org("o1");
        service.welcome(&org).await.unwrap();
        assert!(fakes.store.ledger_of(&org).is_empty());
        let none = fakes.credit_service();
        none.welcome(&Principal::user("u2")).await.unwrap();
        assert!(fakes.store.ledger_of(&Principal::user("u2")).is_empty());
    }

    #[tokio::test]
    async fn transactions_page_newest_first_with_a_cursor() {
        let fakes = OperatorFakes::new();
        let service = fakes.credit_service();
        for amount in 1..=5 {
            service.grant(grant(amount)).await.unwrap();
        }
        let list = |limit, cursor| ListCreditTransactions {
            principal: user(),
            limit,
            cursor,
        };
        let first = service.list_transactions(list(Some(2), None)).await.unwrap();
        assert_eq!(
            first.transactions.iter().map(|t| t.delta_cents).collect::<Vec<_>>(),
            vec![5, 4]
        );
        let second = service
            .list_transactions(list(Some(2), first.next_cursor.clone()))
            .await
            .unwrap();
        assert_eq!(
            second.transactions.iter().map(|t| t.delta_cents).collect::<Vec<_>>(),
            vec![3, 2]
        );
        let last = service
            .list_transactions(list(Some(2), second.next_cursor.clone()))
            .await
            .unwrap();
        assert_eq!(
            last.transactions.iter().map(|t| t.delta_cents).collect::<Vec<_>>(),
            vec![1]
        );
        assert_eq!(last.next_cursor, None);
        assert_eq!(
            service
                .list_transactions(list(None, None))
                .await
                .unwrap()
                .transactions
                .len(),
            5
        );

        let rows = [
            (Some(0), None, "invalid_limit"),
            (Some(101), None, "invalid_limit"),
            (None, Some("abc"), "invalid_cursor"),
            (None, Some("-1"), "invalid_cursor"),
        ];
        for (limit, cursor, code) in rows {
            let result = service.list_transactions(list(limit, cursor.map(str::to_owned))).await;
            assert_eq!(result.unwrap_err().code(), code, "{limit:?} {cursor:?}");
        }
    }
}
