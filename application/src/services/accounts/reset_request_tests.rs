//! Reset requests on in-memory fakes: answered before the address is looked up (so neither the
//! answer nor its timing depends on whether the address has an account), the link queued in the
//! background for a known address only, and expired tokens swept.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, TimeDelta, Utc};
use svc_domain::account::token::{AccountToken, TokenPurpose};
use svc_domain::account::{Account, parse_email};
use tokio::sync::Semaphore;

use super::*;
use crate::ports::accounts::{AccountLink, AccountMailer, AccountTokenRepository};
use crate::testing::{ManualClock, SequentialIds};

/// One account, whose lookups wait until the test lets them through.
struct HeldLookups {
    account: Account,
    gate: Semaphore,
}

#[async_trait::async_trait]
impl AccountRepository for HeldLookups {
    async fn insert(&self, _: &Account) -> Result<bool, RepositoryError> {
        unreachable!("a reset request creates no account")
    }
    async fn find_by_email_key(&self, key: &str) -> Result<Option<Account>, RepositoryError> {
        let _open = self.gate.acquire().await.expect("the gate stays open once opened");
        Ok((self.account.email_key() == key).then(|| self.account.clone()))
    }
    async fn find_by_id(&self, _: &str) -> Result<Option<Account>, RepositoryError> {
        unreachable!("a reset request looks accounts up by address")
    }
    async fn set_password_hash(&self, _: &str, _: &str) -> Result<(), RepositoryError> {
        unreachable!("a reset request changes no password")
    }
    async fn mark_email_verified(&self, _: &str, _: DateTime<Utc>) -> Result<(), RepositoryError> {
        unreachable!("a reset request verifies nothing")
    }
    async fn mark_first_sign_in(&self, _: &str, _: DateTime<Utc>) -> Result<bool, RepositoryError> {
        unreachable!("a reset request signs nobody in")
    }
}

#[derive(Default)]
struct Tokens(Mutex<Vec<AccountToken>>);

#[async_trait::async_trait]
impl AccountTokenRepository for Tokens {
    async fn insert(&self, token: &AccountToken) -> Result<(), RepositoryError> {
        self.0.lock().unwrap().push(token.clone());
        Ok(())
    }
    async fn take(&self, hash: &str, purpose: TokenPurpose) -> Result<Option<AccountToken>, RepositoryError> {
        let mut all = self.0.lock().unwrap();
        let found = all.iter().position(|t| t.token_hash == hash && t.purpose == purpose);
        Ok(found.map(|i| all.remove(i)))
    }
    async fn forget_all(&self, user_id: &str, purpose: TokenPurpose) -> Result<(), RepositoryError> {
        self.0
            .lock()
            .unwrap()
            .retain(|t| t.user_id != user_id || t.purpose != purpose);
        Ok(())
    }
    async fn delete_expired(&self, now: DateTime<Utc>) -> Result<u64, RepositoryError> {
        let mut all = self.0.lock().unwrap();
        let before = all.len();
        all.retain(|t| t.is_live(now));
        Ok((before - all.len()) as u64)
    }
}

#[derive(Default)]
struct Outbox(Mutex<Vec<AccountLink>>);

#[async_trait::async_trait]
impl AccountMailer for Outbox {
    async fn queue_link(&self, link: &AccountLink) -> Result<(), RepositoryError> {
        self.0.lock().unwrap().push(link.clone());
        Ok(())
    }
}

struct Fixture {
    service: AccountService,
    accounts: Arc<HeldLookups>,
    tokens: Arc<Tokens>,
    outbox: Arc<Outbox>,
    clock: Arc<ManualClock>,
}

fn fixture() -> Fixture {
    let clock = Arc::new(ManualClock::default());
    let email = parse_email("ada@example.org").unwrap();
    let accounts = Arc::new(HeldLookups {
        account: Account::new("usr_ada".into(), email, "$argon2id$stub".into(), clock.now()),
        gate: Semaphore::new(0),
    });
    let (tokens, outbox) = (Arc::new(Tokens::default()), Arc::new(Outbox::default()));
    let service = AccountService::new(accounts.clone(), clock.clone(), Arc::new(SequentialIds::default())).mailing(
        AccountLinks {
            tokens: tokens.clone(),
            mailer: outbox.clone(),
            base_url: "https://svc.example.org".into(),
        },
    );
    Fixture {
        service,
        accounts,
        tokens,
        outbox,
        clock,
    }
}

/// Generous: the answer needs no lookup at all, so only a broken rule waits this long.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

#[tokio::test]
async fn a_reset_request_is_answered_before_the_address_is_looked_up() {
    let f = fixture();
    for email in ["ada@example.org", "nobody@example.org"] {
        let answered = tokio::time::timeout(ANSWER_WITHIN, f.service.request_password_reset(email, None)).await;
        assert!(
            matches!(answered, Ok(Ok(()))),
            "{email}: answered while the lookup is held"
        );
    }
    assert!(
        f.outbox.0.lock().unwrap().is_empty(),
        "nothing is queued before the lookup"
    );

    f.accounts.gate.add_permits(1);
    f.service.background_work_finished().await;
    let queued = f.outbox.0.lock().unwrap().clone();
    assert_eq!(queued.len(), 1, "{queued:?}");
    assert_eq!(queued[0].recipient, "ada@example.org");
    assert_eq!(queued[0].purpose, TokenPurpose::ResetPassword);
    assert!(
        queued[0]
            .url
            .starts_with("https://svc.example.org/account/reset?token=")
    );
    assert_eq!(f.tokens.0.lock().unwrap().len(), 1, "one token, for the known address");
}

#[tokio::test]
async fn expired_tokens_are_swept_by_the_clock() {
    let f = fixture();
    f.accounts.gate.add_permits(1);
    f.service.request_password_reset("ada@example.org", None).await.unwrap();
    f.service.background_work_finished().await;
    assert_eq!(f.service.sweep_expired_tokens().await.unwrap(), 0, "still live");
    f.clock
        .advance(TokenPurpose::ResetPassword.lifetime() - TimeDelta::seconds(1));
    assert_eq!(f.service.sweep_expired_tokens().await.unwrap(), 0, "a second left");
    f.clock.advance(TimeDelta::seconds(1));
    assert_eq!(f.service.sweep_expired_tokens().await.unwrap(), 1);
    assert!(f.tokens.0.lock().unwrap().is_empty());
}

/// A reset refused because every place to hash in is taken leaves its link unspent.
#[tokio::test]
async fn a_reset_refused_busy_does_not_spend_its_link() {
    let f = fixture();
    let service = AccountService {
        hashing: hashing::Hashing::bounded(1, 0),
        ..f.service.clone()
    };
    f.accounts.gate.add_permits(1);
    service.request_password_reset("ada@example.org", None).await.unwrap();
    service.background_work_finished().await;
    let url = f.outbox.0.lock().unwrap()[0].url.clone();
    let token = url.split("token=").nth(1).unwrap().to_owned();

    let held = service.hashing.admit().unwrap();
    let refused = service.reset_password(&token, "a brand new password").await;
    assert!(
        matches!(
            refused,
            Err(AccountServiceError::Busy(CpuBusy { retry_after_seconds: 1 }))
        ),
        "{refused:?}"
    );
    drop(held);
    assert_eq!(f.tokens.0.lock().unwrap().len(), 1, "the link still works");
}

/// Past the lookups allowed in flight a request is dropped, answered all the same; once they end
/// the next one is served.
#[tokio::test]
async fn reset_requests_past_the_lookups_in_flight_are_dropped_with_the_same_answer() {
    let f = fixture();
    let asked = super::links::RESET_LOOKUPS_IN_FLIGHT + 1;
    for _ in 0..asked {
        let answered =
            tokio::time::timeout(ANSWER_WITHIN, f.service.request_password_reset("ada@example.org", None)).await;
        assert!(matches!(answered, Ok(Ok(()))), "the same answer for every request");
    }
    f.accounts.gate.add_permits(asked + 1);
    f.service.background_work_finished().await;
    assert_eq!(
        f.outbox.0.lock().unwrap().len(),
        super::links::RESET_LOOKUPS_IN_FLIGHT,
        "the one past the bound was dropped"
    );

    f.service.request_password_reset("ada@example.org", None).await.unwrap();
    f.service.background_work_finished().await;
    assert_eq!(
        f.outbox.0.lock().unwrap().len(),
        super::links::RESET_LOOKUPS_IN_FLIGHT + 1,
        "served again once the lookups ended"
    );
}
