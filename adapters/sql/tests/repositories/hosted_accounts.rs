//! Hosted accounts and their tokens on every backend: one account per address whatever its
//! case, the first sign-in stamped once, a token taken once, expired tokens swept once.

use crate::support;

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::accounts::{AccountRepository, AccountTokenRepository};
use svc_domain::account::token::{AccountToken, TokenPurpose};
use svc_domain::account::{Account, parse_email};
use svc_sql::hosted::{SeaOrmAccountRepository, SeaOrmAccountTokenRepository};

support::backend_tests!(
    an_address_has_one_account_whatever_its_case,
    the_first_sign_in_is_stamped_once,
    a_token_is_taken_once_and_only_for_its_purpose,
    forgetting_a_purpose_spends_every_token_of_it_for_that_account_alone,
    expired_tokens_are_swept_once_and_live_ones_stay
);

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-10T10:00:00Z").unwrap().to_utc()
}

fn account(user_id: &str, email: &str) -> Account {
    Account::new(
        user_id.into(),
        parse_email(email).unwrap(),
        "$argon2id$stub".into(),
        now(),
    )
}

async fn an_address_has_one_account_whatever_its_case(db: DatabaseConnection) {
    let repo = SeaOrmAccountRepository::new(db);
    assert!(repo.insert(&account("usr_a", "Ada@Example.org")).await.unwrap());
    assert!(
        !repo.insert(&account("usr_b", "ada@example.ORG")).await.unwrap(),
        "same address"
    );
    let found = repo.find_by_email_key("ada@example.org").await.unwrap().unwrap();
    assert_eq!(found, account("usr_a", "Ada@Example.org"));
    assert_eq!(repo.find_by_id("usr_a").await.unwrap(), Some(found));
    assert_eq!(repo.find_by_id("usr_b").await.unwrap(), None);

    repo.set_password_hash("usr_a", "$argon2id$fresh").await.unwrap();
    repo.mark_email_verified("usr_a", now()).await.unwrap();
    repo.mark_email_verified("usr_a", now() + TimeDelta::hours(1))
        .await
        .unwrap();
    let updated = repo.find_by_id("usr_a").await.unwrap().unwrap();
    assert_eq!(updated.password_hash, "$argon2id$fresh");
    assert_eq!(updated.email_verified_at, Some(now()), "the first stamp stays");
}

async fn the_first_sign_in_is_stamped_once(db: DatabaseConnection) {
    let repo = SeaOrmAccountRepository::new(db);
    repo.insert(&account("usr_a", "a@example.org")).await.unwrap();
    assert!(repo.mark_first_sign_in("usr_a", now()).await.unwrap());
    assert!(
        !repo
            .mark_first_sign_in("usr_a", now() + TimeDelta::minutes(1))
            .await
            .unwrap()
    );
    assert!(!repo.mark_first_sign_in("usr_nobody", now()).await.unwrap());
    let stored = repo.find_by_id("usr_a").await.unwrap().unwrap();
    assert_eq!(stored.first_sign_in_at, Some(now()));
}

async fn a_token_is_taken_once_and_only_for_its_purpose(db: DatabaseConnection) {
    let repo = SeaOrmAccountTokenRepository::new(db);
    let token = AccountToken::issue("the-secret", "usr_a", TokenPurpose::ResetPassword, now());
    repo.insert(&token).await.unwrap();
    assert_eq!(
        repo.take(&token.token_hash, TokenPurpose::VerifyEmail).await.unwrap(),
        None,
        "another purpose"
    );
    assert_eq!(
        repo.take(&token.token_hash, TokenPurpose::ResetPassword).await.unwrap(),
        Some(token.clone())
    );
    assert_eq!(
        repo.take(&token.token_hash, TokenPurpose::ResetPassword).await.unwrap(),
        None
    );
}

async fn forgetting_a_purpose_spends_every_token_of_it_for_that_account_alone(db: DatabaseConnection) {
    let repo = SeaOrmAccountTokenRepository::new(db);
    let issued = [
        ("first", "usr_a", TokenPurpose::ResetPassword),
        ("second", "usr_a", TokenPurpose::ResetPassword),
        ("verify", "usr_a", TokenPurpose::VerifyEmail),
        ("other", "usr_b", TokenPurpose::ResetPassword),
    ]
    .map(|(secret, user, purpose)| AccountToken::issue(secret, user, purpose, now()));
    for token in &issued {
        repo.insert(token).await.unwrap();
    }
    repo.forget_all("usr_a", TokenPurpose::ResetPassword).await.unwrap();
    let taken = |token: &AccountToken| {
        let (repo, token) = (&repo, token.clone());
        async move { repo.take(&token.token_hash, token.purpose).await.unwrap() }
    };
    assert_eq!(taken(&issued[0]).await, None);
    assert_eq!(taken(&issued[1]).await, None);
    assert_eq!(
        taken(&issued[2]).await,
        Some(issued[2].clone()),
        "another purpose stays"
    );
    assert_eq!(
        taken(&issued[3]).await,
        Some(issued[3].clone()),
        "another account's stays"
    );
}

/// Two replicas sweeping at once delete each expired row once between them; a token at its
/// expiry is expired (`AccountToken::is_live`), one a moment younger stays.
async fn expired_tokens_are_swept_once_and_live_ones_stay(db: DatabaseConnection) {
    let repo = SeaOrmAccountTokenRepository::new(db);
    let hour = TimeDelta::hours(1);
    let issued = [
        ("long-expired", TokenPurpose::ResetPassword, now() - TimeDelta::days(3)),
        ("at-its-expiry", TokenPurpose::ResetPassword, now() - hour),
        ("verify-expired", TokenPurpose::VerifyEmail, now() - TimeDelta::days(1)),
        (
            "reset-live",
            TokenPurpose::ResetPassword,
            now() - hour + TimeDelta::seconds(1),
        ),
        ("verify-live", TokenPurpose::VerifyEmail, now() - hour),
    ]
    .map(|(secret, purpose, at)| AccountToken::issue(secret, "usr_a", purpose, at));
    for token in &issued {
        repo.insert(token).await.unwrap();
    }
    let (first, second) = tokio::join!(repo.delete_expired(now()), repo.delete_expired(now()));
    assert_eq!(first.unwrap() + second.unwrap(), 3, "each expired row once");
    assert_eq!(repo.delete_expired(now()).await.unwrap(), 0);
    for token in &issued {
        let taken = repo.take(&token.token_hash, token.purpose).await.unwrap();
        let live = token.is_live(now());
        assert_eq!(taken.is_some(), live, "{token:?}");
    }
}
