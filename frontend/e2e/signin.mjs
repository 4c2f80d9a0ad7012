// The browser flows of sign-in a company can use (issue 42, points 10 and 11): an administrator
// invites by email and the invitee sets their own password and lands in the project; a generated
// password must be changed before anything else; single sign-on through a real OpenID provider
// (npm oidc-provider, started by run.mjs with startOidcProvider for the no-model backend).
// Imported by run.mjs; `t` holds its helpers.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { snap } from './shots.mjs';

export const SHOTS = process.env.SIGNIN_SHOTS ?? '/work/shots/signin';
const HERE = import.meta.dirname;
const PROVIDER_SCRIPT = path.resolve(HERE, '..', '..', 'backend', 'tests', 'support', 'oidc_provider.mjs');
const PROVIDER_MODULE = path.resolve(HERE, '..', 'node_modules', 'oidc-provider', 'lib', 'index.js');
export const OIDC_NAME = 'Corp SSO';
const CLIENT = { client_id: 'workbench-e2e', client_secret: 'e2e-client-secret-not-a-real-one' };

/**
 * Start the test OpenID provider (the backend tests' script) on `port` for a workbench at `base`.
 * Returns the settings that backend needs and the child process (stopped with the others).
 */
export function startOidcProvider(port, base) {
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'e2e-key', use: 'sig', alg: 'RS256' };
  const config = {
    issuer,
    port,
    jwks: { keys: [jwk] },
    client: { ...CLIENT, redirect_uris: [`${base}/api/v1/auth/oidc/callback`], grant_types: ['authorization_code'], response_types: ['code'] },
  };
  const child = spawn('node', [PROVIDER_SCRIPT], {
    env: { ...process.env, OIDC_TEST_CONFIG: JSON.stringify(config), OIDC_PROVIDER_MODULE: PROVIDER_MODULE, NODE_ENV: 'test' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const env = {
    OIDC_ISSUER: issuer,
    OIDC_CLIENT_ID: CLIENT.client_id,
    OIDC_CLIENT_SECRET: CLIENT.client_secret,
    OIDC_NAME,
    OIDC_SCOPES: 'openid email profile groups',
    OIDC_ADMIN_GROUP: 'wb-admins',
  };
  return { child, env, issuer };
}

const VARIANTS = [
  { tag: 'wide-light', viewport: { width: 1440, height: 900 }, colorScheme: 'light' },
  { tag: 'wide-dark', viewport: { width: 1440, height: 900 }, colorScheme: 'dark' },
  { tag: 'narrow-light', viewport: { width: 390, height: 844 }, colorScheme: 'light' },
  { tag: 'narrow-dark', viewport: { width: 390, height: 844 }, colorScheme: 'dark' },
];

export async function signinTests(t) {
  const { browser, page, base, ssoBase, test, expect, T } = t;
  mkdirSync(SHOTS, { recursive: true });
  const shotOf = (p, name) => snap(p, path.join(SHOTS, `${name}.png`));
  const api = async (method, url, body, token) => {
    const r = await fetch(`${base}${url}`, {
      method,
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: r.status === 204 ? null : await r.json() };
  };
  const adminToken = () => page.evaluate(() => JSON.parse(localStorage.getItem('wb.auth')).token);
  /** A fresh browser (its own storage) of one variant, signed in as the login given (or not at all). */
  const browserAs = async (variant, login = null) => {
    const ctx = await browser.newContext({ viewport: variant.viewport, colorScheme: variant.colorScheme });
    if (login) {
      const stored = { token: login.access_token, user: login.user, expiresAt: login.expires_at };
      await ctx.addInitScript((s) => localStorage.setItem('wb.auth', s), JSON.stringify(stored));
    }
    const p = await ctx.newPage();
    p.setDefaultTimeout(T);
    return { ctx, p };
  };
  const login = async (email, password) => (await api('POST', '/api/v1/auth/login', { email, password })).body;

  await test('signin: an admin invites by email; the link opens a page where the invitee sets a password and lands in the project', async () => {
    const token = await adminToken();
    const project = (await api('POST', '/api/v1/projects', { name: 'Invited team' }, token)).body;
    // The administrator's users screen: an invite link, shown once; no password typed for anyone.
    await page.goto(`${base}/admin/users`);
    await page.getByRole('button', { name: 'New user' }).click();
    const dialog = page.getByRole('dialog', { name: 'New user' });
    expect((await dialog.getByLabel('Password').count()) === 0, 'the new-user dialog asks for no password');
    await dialog.getByLabel('Email').fill('rita@example.com');
    await dialog.getByRole('button', { name: 'Make invite' }).click();
    const url = await dialog.getByTestId('invite-url').inputValue();
    expect(/\/invite#[A-Za-z0-9_-]{43}$/.test(url), `the link carries its token in the fragment: ${url}`);
    await shotOf(page, 'invite-dialog-wide-light');
    await dialog.getByRole('button', { name: 'Done' }).click();
    const row = page.getByTestId('invite-row').filter({ hasText: 'rita@example.com' });
    expect(/Waiting/.test(await row.innerText()), 'the invite waits in the list');
    await shotOf(page, 'users-with-invites-wide-light');

    // An owner's invite to the project through the API (the Members dialog's is the next test).
    const made = (await api('POST', '/api/v1/invites', { email: 'sam@example.com', project_id: project.id, role: 'editor' }, token)).body;
    for (const variant of VARIANTS) {
      const { ctx, p } = await browserAs(variant);
      try {
        await p.goto(made.url);
        await p.getByLabel('Password', { exact: true }).waitFor();
        expect(!p.url().includes('#'), 'the token leaves the address bar');
        await shotOf(p, `invite-page-${variant.tag}`);
      } finally {
        await ctx.close();
      }
    }
    const { ctx, p } = await browserAs(VARIANTS[0]);
    try {
      await p.goto(made.url);
      await p.getByLabel('Password', { exact: true }).fill('sams-own-password');
      await p.getByLabel('Confirm password').fill('sams-own-password');
      await p.getByRole('button', { name: 'Set password and sign in' }).click();
      await p.waitForURL(`**/projects/${project.id}`);
      await p.getByTestId('project-title').filter({ hasText: 'Invited team' }).waitFor();
      await shotOf(p, 'invitee-landed-wide-light');
    } finally {
      await ctx.close();
    }
    const again = await login('sam@example.com', 'sams-own-password');
    expect(again.user?.email === 'sam@example.com', 'the invitee signs in with the password they chose');
  });

  await test("signin: a project owner invites from the Members dialog with a role; the invitee accepts and lands in the project", async () => {
    const token = await adminToken();
    const project = (await api('POST', '/api/v1/projects', { name: 'Owner invites' }, token)).body;
    // A plain owner (no administrator), made through an invite of the administrator's.
    const ownerInvite = (await api('POST', '/api/v1/invites', { email: 'olga@example.com', project_id: project.id, role: 'owner' }, token)).body;
    const owner = (await api('POST', `/api/v1/invites/${ownerInvite.token}/accept`, { password: 'olgas-own-password' })).body;
    expect(owner.user?.is_admin === false, 'the owner is no administrator');
    const openMembers = async (p) => {
      await p.goto(`${base}/projects/${project.id}`);
      await p.getByTestId('project-title').filter({ hasText: 'Owner invites' }).waitFor();
      await p.getByRole('button', { name: 'Members' }).click();
      return p.getByRole('dialog', { name: 'Members' });
    };
    let url = null;
    for (const variant of VARIANTS) {
      const { ctx, p } = await browserAs(variant, owner);
      try {
        const dialog = await openMembers(p);
        // The first browser invites Una; the others invite someone they then revoke, so each
        // width and theme shows the link once and the waiting list.
        const who = url ? `peek-${variant.tag}@example.com` : 'una@example.com';
        await dialog.getByLabel('Invite by email').fill(who);
        await dialog.getByLabel('Role of the invited person').selectOption('viewer');
        await dialog.getByRole('button', { name: 'Invite', exact: true }).click();
        const link = await dialog.getByTestId('invite-url').inputValue();
        expect(/\/invite#[A-Za-z0-9_-]{43}$/.test(link), `the link carries its token in the fragment: ${link}`);
        const made = await dialog.getByTestId('invite-made').innerText();
        expect(made.includes('This server sends no email: pass the link on yourself.'), `the email status is said: ${made}`);
        expect((await dialog.getByRole('button', { name: /Copy/ }).count()) === 1, 'the link has a Copy button');
        await shotOf(p, `members-invite-made-${variant.tag}`);
        url ??= link;
        await dialog.getByRole('button', { name: 'Invite someone else' }).click();
        await dialog.getByLabel('Invite by email').waitFor();
        const pending = dialog.getByRole('list', { name: 'Pending invites' }).getByTestId('invite-row').filter({ hasText: 'una@example.com' });
        await pending.waitFor();
        const text = await pending.innerText();
        expect(/Waiting/.test(text) && /Link passed on by hand/.test(text), `the pending invite is listed: ${text}`);
        expect((await pending.getByRole('button', { name: 'Revoke' }).count()) === 1, 'a pending invite can be revoked');
        await pending.scrollIntoViewIfNeeded();
        await shotOf(p, `members-invites-${variant.tag}`);
        if (who !== 'una@example.com') {
          const peek = dialog.getByTestId('invite-row').filter({ hasText: who });
          await peek.getByRole('button', { name: 'Revoke' }).click();
          await peek.waitFor({ state: 'detached' });
        }
      } finally {
        await ctx.close();
      }
    }
    // The invitee opens the link, sets a password and lands in the project as a viewer.
    const { ctx, p } = await browserAs(VARIANTS[0]);
    try {
      await p.goto(url);
      await p.getByLabel('Password', { exact: true }).fill('unas-own-password');
      await p.getByLabel('Confirm password').fill('unas-own-password');
      await p.getByRole('button', { name: 'Set password and sign in' }).click();
      await p.waitForURL(`**/projects/${project.id}`);
      await p.getByTestId('project-title').filter({ hasText: 'Owner invites' }).waitFor();
    } finally {
      await ctx.close();
    }
    const members = (await api('GET', `/api/v1/projects/${project.id}/members`, null, owner.access_token)).body;
    const una = members.items.find((m) => m.email === 'una@example.com');
    expect(una?.role === 'viewer', `the invitee is a viewer of the project: ${JSON.stringify(una)}`);
    // The owner's dialog no longer lists the used invite as pending; a viewer sees no invite control.
    const o = await browserAs(VARIANTS[0], owner);
    try {
      const dialog = await openMembers(o.p);
      await dialog.getByTestId('invites-empty').waitFor();
      await dialog.getByTestId('member-row').filter({ hasText: 'una@example.com' }).waitFor();
    } finally {
      await o.ctx.close();
    }
    const v = await browserAs(VARIANTS[0], await login('una@example.com', 'unas-own-password'));
    try {
      const dialog = await openMembers(v.p);
      await dialog.getByTestId('members-blocked').waitFor();
      expect((await dialog.getByLabel('Invite by email').count()) === 0, 'a viewer has no invite control');
      expect((await dialog.getByText('Pending invites').count()) === 0, 'a viewer sees no invites');
    } finally {
      await v.ctx.close();
    }
  });

  await test('signin: a generated password is shown once and must be changed before anything else', async () => {
    await page.goto(`${base}/admin/users`);
    await page.getByRole('button', { name: 'New user' }).click();
    const dialog = page.getByRole('dialog', { name: 'New user' });
    await dialog.getByLabel('Email').fill('tess@example.com');
    await dialog.getByRole('radio', { name: 'Generated password' }).click();
    await dialog.getByRole('button', { name: 'Create user' }).click();
    const generated = await dialog.getByTestId('generated-password').inputValue();
    expect(generated.length >= 16, 'a long generated password is shown');
    await shotOf(page, 'generated-password-wide-light');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await page.getByTestId('user-row').filter({ hasText: 'tess@example.com' }).getByText('Must change password').waitFor();
    // The users screen and its new-user dialog in the other widths and themes, as an administrator.
    const adminLogin = await page.evaluate(() => {
      const s = JSON.parse(localStorage.getItem('wb.auth'));
      return { access_token: s.token, user: s.user, expires_at: s.expiresAt };
    });
    for (const variant of VARIANTS) {
      const { ctx, p } = await browserAs(variant, adminLogin);
      try {
        await p.goto(`${base}/admin/users`);
        await p.getByTestId('user-row').filter({ hasText: 'tess@example.com' }).waitFor();
        await shotOf(p, `users-with-invites-${variant.tag}`);
        await p.getByRole('button', { name: 'New user' }).click();
        const dialog = p.getByRole('dialog', { name: 'New user' });
        await dialog.getByLabel('Email').fill('someone@example.com');
        // An invite may bring them into a project with a role (the administrator picks one, or none).
        await dialog.getByRole('option', { name: 'Invited team' }).waitFor({ state: 'attached' });
        await dialog.getByLabel('Project (optional)').selectOption({ label: 'Invited team' });
        await dialog.getByLabel('Their role in the project').selectOption('viewer');
        await shotOf(p, `new-user-dialog-${variant.tag}`);
      } finally {
        await ctx.close();
      }
    }

    for (const variant of VARIANTS) {
      const { ctx, p } = await browserAs(variant, await login('tess@example.com', generated));
      try {
        await p.goto(`${base}/`);
        await p.getByTestId('must-change-password').waitFor();
        expect((await p.getByRole('heading', { name: 'Projects' }).count()) === 0, 'nothing else shows before the change');
        await shotOf(p, `must-change-${variant.tag}`);
      } finally {
        await ctx.close();
      }
    }
    const { ctx, p } = await browserAs(VARIANTS[0]);
    try {
      await p.goto(`${base}/login`);
      await p.getByLabel('Email').fill('tess@example.com');
      await p.getByLabel('Password').fill(generated);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByTestId('must-change-password').waitFor();
      await p.getByLabel('Password you were given').fill(generated);
      await p.getByLabel('New password', { exact: true }).fill('tess-own-password');
      await p.getByLabel('Confirm new password').fill('tess-own-password');
      await p.getByRole('button', { name: 'Set my password' }).click();
      await p.getByRole('heading', { name: 'Projects' }).waitFor();
    } finally {
      await ctx.close();
    }
  });

  await test('signin: sign in with the OpenID provider from the login page', async () => {
    // The backend that has single sign-on starts alongside the others; it may still be warming up.
    for (const until = Date.now() + 180_000; Date.now() < until; await new Promise((r) => setTimeout(r, 500))) {
      if (await fetch(`${ssoBase}/readyz`).then((r) => r.ok, () => false)) break;
    }
    const config = await (await fetch(`${ssoBase}/api/v1/auth/config`)).json();
    expect(config.oidc?.name === OIDC_NAME && config.password_login, `the login page is told of single sign-on: ${JSON.stringify(config)}`);
    for (const variant of VARIANTS) {
      const { ctx, p } = await browserAs(variant);
      try {
        await p.goto(`${ssoBase}/login`);
        await p
          .getByRole('link', { name: `Sign in with ${OIDC_NAME}` })
          .waitFor()
          .catch(async (e) => {
            await shotOf(p, `failure-login-with-sso-${variant.tag}`);
            throw e;
          });
        await shotOf(p, `login-with-sso-${variant.tag}`);
      } finally {
        await ctx.close();
      }
    }
    const { ctx, p } = await browserAs(VARIANTS[0]);
    try {
      await p.goto(`${ssoBase}/login`);
      await p.getByRole('link', { name: `Sign in with ${OIDC_NAME}` }).click();
      // The provider's own (development) login and consent pages.
      await p.locator('input[name=login]').fill('admin-uma@corp.example');
      await p.locator('input[name=password]').fill('any password');
      await p.locator('button[type=submit]').click();
      await p.locator('button[type=submit]', { hasText: 'Continue' }).click();
      await p.getByRole('heading', { name: 'Projects' }).waitFor();
      expect(!p.url().includes('code='), 'no code is left in the address');
      const me = await p.evaluate(() => JSON.parse(localStorage.getItem('wb.auth')).user);
      expect(me.email === 'admin-uma@corp.example' && me.is_admin, `signed in as the provider's admin: ${JSON.stringify(me)}`);
      await shotOf(p, 'sso-signed-in-wide-light');
      // A refusal lands on the SSO page with its sentence.
      await p.goto(`${ssoBase}/api/v1/auth/oidc/callback?code=x&state=not-a-state`);
      await p.getByTestId('sso-error').filter({ hasText: 'This sign-in was already used or has expired' }).waitFor();
      await shotOf(p, 'sso-refused-wide-light');
    } finally {
      await ctx.close();
    }
  });
}
