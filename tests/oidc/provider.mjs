// A real OpenID Connect provider for the teams tests: panva's oidc-provider on 127.0.0.1.
//
//   node provider.mjs CONFIG.json
//
// CONFIG.json: {"clients": [oidc-provider client metadata...],
//               "users": {"ana@example.org": {"password": "...", "name": "Ana",
//                                             "email_verified": true}}}
// It listens on a free port of 127.0.0.1 and prints one JSON line, {"issuer": URL}, once ready.
// Sign-in is a plain HTML form (login = the e-mail, password); consent is granted at once.
// ID tokens carry the email claims (conformIdTokenClaims off), as Streamlit's st.login reads
// the user from the ID token. PKCE (S256) is required of every client. prompt=select_account
// (which Streamlit's st.login sends, as Google or Microsoft accept it) is answered by the same
// sign-in form.

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';

import Provider, { interactionPolicy } from 'oidc-provider';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const users = config.users || {};

// The default prompts (login, consent) and select_account, resolved by signing in.
const policy = interactionPolicy.base();
policy.add(new interactionPolicy.Prompt({ name: 'select_account', requestable: true }), 0);

function signingKey() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: 'test-key', use: 'sig', alg: 'RS256' };
}

function escape(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function form(uid, message) {
  return `<!doctype html><title>Sign in</title>
<form method="post" action="/interaction/${escape(uid)}/login">
${message ? `<p class="error">${escape(message)}</p>` : ''}
<input name="login" autocomplete="username"><input name="password" type="password">
<button type="submit">Sign in</button></form>`;
}

async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

async function consent(provider, req, res, details) {
  const { prompt, params, session } = details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
  if (prompt.details.missingOIDCClaims) grant.addOIDCClaims(prompt.details.missingOIDCClaims);
  const grantId = await grant.save();
  const result = { consent: details.grantId ? {} : { grantId } };
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

async function interaction(provider, req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) throw new Error('interaction id mismatch');
  if (details.prompt.name === 'consent') {
    await consent(provider, req, res, details);
    return;
  }
  if (action !== 'login' || req.method !== 'POST') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(form(uid, ''));
    return;
  }
  const fields = await body(req);
  const login = (fields.get('login') || '').trim().toLowerCase();
  const user = users[login];
  if (!user || user.password !== fields.get('password')) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(form(uid, 'wrong e-mail or password'));
    return;
  }
  await provider.interactionFinished(req, res,
    { select_account: {}, login: { accountId: login } }, { mergeWithLastSubmission: false });
}

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: config.clients,
    jwks: { keys: [signingKey()] },
    cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { policy, url: (_ctx, details) => `/interaction/${details.uid}` },
    async findAccount(_ctx, id) {
      const user = users[id];
      if (!user) return undefined;
      return {
        accountId: id,
        async claims() {
          return {
            sub: id,
            email: id,
            email_verified: user.email_verified !== false,
            name: user.name || id,
          };
        },
      };
    },
  });
  const handle = provider.callback();
  server.on('request', async (req, res) => {
    const match = /^\/interaction\/([^/?]+)(?:\/(login))?(?:\?|$)/.exec(req.url);
    if (!match) {
      handle(req, res);
      return;
    }
    try {
      await interaction(provider, req, res, match[1], match[2]);
    } catch (err) {
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`interaction failed: ${err.message}`);
    }
  });
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
