//! Accounts on in-memory fakes: a stale hash is replaced at sign-in, the first sign-in is told
//! once, and an unknown email and a wrong password fail alike.

use std::sync::{Arc, Mutex};

use argon2_params::old_hash;
use chrono::{DateTime, Utc};
use svc_domain::account::{Account, password};

use super::*;
use crate::testing::{ManualClock, SequentialIds};

#[derive(Default)]
struct Accounts(Mutex<Vec<Account>>);

#[async_trait::async_trait]
impl AccountRepository for Accounts {
    async fn insert(&self, account: &Account) -> Result<bool, RepositoryError> {
        let mut all = self.0.lock().unwrap();
        if all.iter().any(|a| a.email_key() == account.email_key()) {
            return Ok(false);
        }
        all.push(account.clone());
        Ok(true)
    }
    async fn find_by_email_key(&self, key: &str) -> Result<Option<Account>, RepositoryError> {
        Ok(self.0.lock().unwrap().iter().find(|a| a.email_key() == key).cloned())
    }
    async fn find_by_id(&self, user_id: &str) -> Result<Option<Account>, RepositoryError> {
        Ok(self.0.lock().unwrap().iter().find(|a| a.user_id == user_id).cloned())
    }
    async fn set_password_hash(&self, user_id: &str, hash: &str) -> Result<(), RepositoryError> {
        for a in self.0.lock().unwrap().iter_mut().filter(|a| a.user_id == user_id) {
            a.password_hash = hash.to_owned();
        }
        Ok(())
    }
    async fn mark_email_verified(&self, user_id: &str, at: DateTime<Utc>) -> Result<(), RepositoryError> {
        for a in self.0.lock().unwrap().iter_mut().filter(|a| a.user_id == user_id) {
            a.email_verified_at.get_or_insert(at);
        }
        Ok(())
    }
    async fn mark_first_sign_in(&self, user_id: &str, at: DateTime<Utc>) -> Result<bool, RepositoryError> {
        let mut all = self.0.lock().unwrap();
        let account = all.iter_mut().find(|a| a.user_id == user_id).unwrap();
        let first = account.first_sign_in_at.is_none();
        account.first_sign_in_at.get_or_insert(at);
        Ok(first)
    }
}

/// A hash made with weaker, older parameters (argon2id, 8 MiB, 1 iteration).
mod argon2_params {
    pub fn old_hash(password: &str) -> String {
        use argon2::password_hash::{PasswordHasher, SaltString};
        let params = argon2::Params::new(8 * 1024, 1, 1, None).unwrap();
        let argon2 = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
        let salt = SaltString::encode_b64(&[9; 16]).unwrap();
        argon2.hash_password(password.as_bytes(), &salt).unwrap().to_string()
    }
}

fn service() -> (AccountService, Arc<Accounts>) {
    let accounts = Arc::new(Accounts::default());
    let service = AccountService::new(
        accounts.clone(),
        Arc::new(ManualClock::default()),
        Arc::new(SequentialIds::default()),
    );
    (service, accounts)
}

fn attempt(email: &str, password: &str) -> SignIn {
    SignIn {
        email: email.into(),
        password: password.into(),
        client_address: None,
        sign_up: false,
    }
}

#[tokio::test]
async fn a_hash_made_with_older_parameters_is_replaced_at_sign_in() {
    let (service, accounts) = service();
    let email = svc_domain::account::parse_email("ada@example.org").unwrap();
    let stale = old_hash("correct horse battery");
    accounts
        .0
        .lock()
        .unwrap()
        .push(Account::new("usr_a".into(), email, stale.clone(), Utc::now()));

    let signed_in = service
        .sign_in(attempt("ada@example.org", "correct horse battery"))
        .await
        .unwrap();
    assert!(signed_in.first_sign_in);
    let stored = accounts.0.lock().unwrap()[0].password_hash.clone();
    assert_ne!(stored, stale);
    assert!(!password::needs_rehash(&stored), "{stored}");
    assert!(password::verify("correct horse battery", &stored));

    let again = service
        .sign_in(attempt("ADA@example.org", "correct horse battery"))
        .await
        .unwrap();
    assert!(!again.first_sign_in, "the first sign-in is told once");
    assert_eq!(
        accounts.0.lock().unwrap()[0].password_hash,
        stored,
        "a current hash is kept"
    );
}

#[tokio::test]
async fn an_unknown_email_and_a_wrong_password_fail_alike() {
    let (service, _) = service();
    service
        .create("ada@example.org", Some("correct horse battery"))
        .await
        .unwrap();
    for (email, password) in [
        ("ada@example.org", "wrong password!!"),
        ("nobody@example.org", "wrong password!!"),
        ("not an email", "x"),
    ] {
        let error = service.sign_in(attempt(email, password)).await.unwrap_err();
        assert!(matches!(error, AccountServiceError::Refused), "{email}: {error:?}");
    }
}

#[derive(Default)]
struct Identities(Mutex<Vec<(String, String, String)>>);

#[async_trait::async_trait]
impl ExternalIdentityRepository for Identities {
    async fn find_user(&self, issuer: &str, subject: &str) -> Result<Option<String>, RepositoryError> {
        let all = self.0.lock().unwrap();
        Ok(all
            .iter()
            .find(|(i, s, _)| i == issuer && s == subject)
            .map(|(_, _, u)| u.clone()))
    }
    async fn link(
        &self,
        issuer: &str,
        subject: &str,
        user_id: &str,
        _at: DateTime<Utc>,
    ) -> Result<bool, RepositoryError> {
        let mut all = self.0.lock().unwrap();
        if all.iter().any(|(i, s, _)| i == issuer && s == subject) {
            return Ok(false);
        }
        all.push((issuer.into(), subject.into(), user_id.into()));
        Ok(true)
    }
}

fn identity(
    subject: &str,
    email: Option<&str>,
    email_verified: bool,
) -> crate::ports::external_identity::ExternalIdentity {
    crate::ports::external_identity::ExternalIdentity {
        issuer: "https://id.example.org".into(),
        subject: subject.into(),
        email: email.map(str::to_owned),
        email_verified,
    }
}

#[tokio::test]
async fn an_external_identity_links_by_verified_email_and_is_created_only_with_open_sign_up() {
    let (closed, accounts) = service();
    let closed = closed.with_identities(Arc::new(Identities::default()));
    let unknown = closed
        .sign_in_external(&identity("s1", Some("ada@example.org"), true))
        .await;
    assert!(matches!(unknown, Err(AccountServiceError::ExternalIdentityUnknown)));
    let made = closed
        .create("ada@example.org", Some("correct horse battery"))
        .await
        .unwrap();
    // An unverified email proves nothing about the account that has it.
    let unverified = closed
        .sign_in_external(&identity("s1", Some("ada@example.org"), false))
        .await;
    assert!(matches!(unverified, Err(AccountServiceError::ExternalEmailTaken)));
    // Its own address is verified (as following its verification link does): now it links.
    accounts
        .mark_email_verified(&made.account.user_id, Utc::now())
        .await
        .unwrap();
    let linked = closed
        .sign_in_external(&identity("s1", Some("ADA@example.org"), true))
        .await
        .unwrap();
    assert_eq!(linked.account.user_id, made.account.user_id);
    assert!(!linked.created);
    // Linked: found by (issuer, subject), whatever the email says now.
    let again = closed.sign_in_external(&identity("s1", None, false)).await.unwrap();
    assert_eq!(again.account.user_id, made.account.user_id);
    assert_eq!(accounts.0.lock().unwrap().len(), 1);

    let (open, accounts) = service();
    let open = open
        .with_signup(SignupMode::Open)
        .with_identities(Arc::new(Identities::default()));
    let no_email = open.sign_in_external(&identity("s2", None, false)).await;
    assert!(matches!(no_email, Err(AccountServiceError::ExternalEmailMissing)));
    let created = open
        .sign_in_external(&identity("s2", Some("bo@example.org"), true))
        .await
        .unwrap();
    assert!(created.created && created.first_sign_in);
    let back = open
        .sign_in_external(&identity("s2", Some("bo@example.org"), true))
        .await
        .unwrap();
    assert_eq!(back.account.user_id, created.account.user_id);
    assert!(!back.created && !back.first_sign_in);
    assert_eq!(accounts.0.lock().unwrap().len(), 1);
}

/// Open sign-up lets anyone register any address with a password: a provider that verified the
/// address must not hand its owner that account while the account's own address is unproven,
/// and an address the provider did not verify makes no account at all.
#[tokio::test]
async fn an_external_identity_never_takes_an_unverified_account_nor_makes_one_for_an_unverified_email() {
    let (open, accounts) = service();
    let open = open
        .with_signup(SignupMode::Open)
        .with_identities(Arc::new(Identities::default()));
    let squatted = open
        .create("victim@corp.example", Some("attacker's password"))
        .await
        .unwrap();
    let refused = open
        .sign_in_external(&identity("victim-sub", Some("victim@corp.example"), true))
        .await;
    assert!(
        matches!(refused, Err(AccountServiceError::ExternalEmailTaken)),
        "{refused:?}"
    );
    assert!(
        open.identities
            .as_ref()
            .unwrap()
            .find_user("https://id.example.org", "victim-sub")
            .await
            .unwrap()
            .is_none(),
        "not linked to {}",
        squatted.account.user_id
    );

    let unverified = open
        .sign_in_external(&identity("claimer", Some("someone@corp.example"), false))
        .await;
    assert!(
        matches!(unverified, Err(AccountServiceError::ExternalEmailMissing)),
        "{unverified:?}"
    );
    assert_eq!(
        accounts.0.lock().unwrap().len(),
        1,
        "no account for an unverified address"
    );

    // A verified address with no account makes one, its address confirmed.
    let made = open
        .sign_in_external(&identity("bo-sub", Some("bo@corp.example"), true))
        .await
        .unwrap();
    assert!(made.created);
    let stored = accounts.find_by_id(&made.account.user_id).await.unwrap().unwrap();
    assert!(stored.email_verified_at.is_some());
}

/// Every place to hash in taken: a sign-in is told to retry, whether or not its email has an
/// account, and is served again once a place frees.
#[tokio::test]
async fn a_sign_in_past_the_hashing_queue_is_refused_busy_for_known_and_unknown_emails_alike() {
    let (service, _) = service();
    let service = AccountService {
        hashing: hashing::Hashing::bounded(1, 0),
        ..service
    };
    service
        .create("ada@example.org", Some("correct horse battery"))
        .await
        .unwrap();
    let held = service.hashing.admit().unwrap();
    for email in ["ada@example.org", "nobody@example.org"] {
        let error = service
            .sign_in(attempt(email, "correct horse battery"))
            .await
            .unwrap_err();
        assert!(
            matches!(error, AccountServiceError::Busy(CpuBusy { retry_after_seconds: 1 })),
            "{email}: {error:?}"
        );
    }
    drop(held);
    let signed_in = service
        .sign_in(attempt("ada@example.org", "correct horse battery"))
        .await
        .unwrap();
    assert_eq!(signed_in.account.email.as_str(), "ada@example.org");
}

/// A right password whose stale hash would be replaced while every place to hash is taken: the
/// person signs in and the old hash stays, to be replaced at a later sign-in.
#[tokio::test]
async fn a_stale_hash_is_kept_when_the_hashing_queue_is_full() {
    let (service, _) = service();
    let service = AccountService {
        hashing: hashing::Hashing::bounded(1, 0),
        ..service
    };
    let email = svc_domain::account::parse_email("ada@example.org").unwrap();
    let stale = old_hash("correct horse battery");
    let account = Account::new("usr_a".into(), email, stale.clone(), Utc::now());
    let held = service.hashing.admit().unwrap();
    let kept = service
        .rehash_if_stale(account.clone(), "correct horse battery")
        .await
        .expect("a full queue keeps the old hash rather than refusing a right password");
    assert_eq!(kept.password_hash, stale);
    drop(held);
    let replaced = service.rehash_if_stale(account, "correct horse battery").await.unwrap();
    assert_ne!(replaced.password_hash, stale);
    assert!(password::verify("correct horse battery", &replaced.password_hash));
}
