#!/usr/bin/env node
// A browser for oidc-provider's development sign-in pages, for tests and for `BROWSER=` of
// tools that open one (mcp-remote): `oidc-browser.mjs <authorization URL> [login]` follows
// the redirects with the cookies set, signs in as `login` (default alice), gives consent,
// prints the URL the authorization server finally redirects to (the client's callback, with
// the code), and requests it as a browser would, which delivers the code to a client that
// listens there (a client that does not is left alone).
const [authorizationUrl, login = 'alice'] = process.argv.slice(2);
if (!authorizationUrl) {
  console.error('usage: oidc-browser.mjs <authorization URL> [login]');
  process.exit(2);
}
const issuerOrigin = new URL(authorizationUrl).origin;
const cookies = new Map();
let url = authorizationUrl;
let form;
for (let step = 0; step < 20; step++) {
  if (new URL(url).origin !== issuerOrigin) {
    process.stdout.write(`${url}\n`);
    await fetch(url).catch(() => undefined);
    process.exit(0);
  }
  const response = await fetch(url, {
    method: form ? 'POST' : 'GET',
    redirect: 'manual',
    headers: {
      cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    body: form,
  });
  for (const setCookie of response.headers.getSetCookie()) {
    const [pair] = setCookie.split(';');
    const eq = pair.indexOf('=');
    cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
  }
  form = undefined;
  const location = response.headers.get('location');
  if (response.status >= 300 && response.status < 400 && location) {
    url = new URL(location, url).toString();
    continue;
  }
  const html = await response.text();
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (response.status !== 200 || action === undefined) {
    console.error(`sign-in stopped at ${url}: HTTP ${response.status} ${html.slice(0, 300)}`);
    process.exit(1);
  }
  url = new URL(action, url).toString();
  form = /name="login"/.test(html)
    ? new URLSearchParams({ prompt: 'login', login, password: 'any' })
    : new URLSearchParams({ prompt: 'consent' });
}
console.error('sign-in did not reach the callback in 20 steps');
process.exit(1);
