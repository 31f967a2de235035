//! Following a mailed verification link as a person does: the link opens a confirmation form
//! (a GET changes nothing, so a mail scanner confirms no address), whose button posts the token.

/// Opens `link` with `client`, checks the page asks for a confirmation and carries the link's
/// token, then confirms: the `POST /account/verify` answer.
pub async fn confirm(client: &reqwest::Client, link: &str) -> reqwest::Response {
    let page = client.get(link).send().await.expect("the link opens");
    assert_eq!(page.status(), 200, "the link opens the confirmation form");
    let html = page.text().await.expect("a page");
    assert!(html.contains("Confirm your email address"), "{html}");
    let token = link.split_once("token=").expect("a token in the link").1;
    assert!(html.contains(&format!("name=\"token\" value=\"{token}\"")), "{html}");
    let action = format!(
        "{}/account/verify",
        &link[..link.find("/account/verify").expect("a verify link")]
    );
    client
        .post(action)
        .form(&[("token", token)])
        .send()
        .await
        .expect("the form posts")
}
