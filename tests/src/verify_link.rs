//! Following a mailed verification link as a person does: the link opens a confirmation form
//! (a GET changes nothing, so a mail scanner confirms no address), whose button posts the token.

/// Opens `link` with `client`, checks the page asks for a confirmation and carries the link's
/// token, then presses the button: the answer of the form's POST.
pub async fn confirm(client: &reqwest::Client, link: &str) -> reqwest::Response {
    let page = client.get(link).send().await.expect("the link opens");
    assert_eq!(page.status(), 200, "the link opens the confirmation form");
    let html = page.text().await.expect("a page");
    assert!(html.contains("Confirm your email address"), "{html}");
    let token = link.split_once("token=").expect("a token in the link").1;
    assert!(html.contains(&format!("name=\"token\" value=\"{token}\"")), "{html}");
    // Where the form posts, resolved against the page's URL as a browser does.
    let action = html
        .split_once("<form method=\"post\" action=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .expect("the form's action")
        .0;
    let action = reqwest::Url::parse(link)
        .expect("a URL")
        .join(action)
        .expect("an action URL");
    client
        .post(action)
        .form(&[("token", token)])
        .send()
        .await
        .expect("the form posts")
}
