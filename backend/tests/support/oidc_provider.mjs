// A real OpenID Connect provider for the tests (npm oidc-provider, from the frontend's
// node_modules): tests/support/oidc.py starts it with its settings in OIDC_TEST_CONFIG
// (issuer, port, the client, the signing keys the test made) and the path of the package
// in OIDC_PROVIDER_MODULE. Its development login page takes any login and password: the
// login is the account's email; a login starting "admin" is in the group "wb-admins", one
// starting "unverified" has email_verified false.
import { pathToFileURL } from 'node:url';

const config = JSON.parse(process.env.OIDC_TEST_CONFIG);
const { default: Provider } = await import(pathToFileURL(process.env.OIDC_PROVIDER_MODULE).href);

const provider = new Provider(config.issuer, {
  clients: [config.client],
  jwks: config.jwks,
  cookies: { keys: ['workbench-test-cookies'] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    groups: ['groups'],
    profile: ['name'],
  },
  scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'],
  // The ID token carries the claims of the scopes (the workbench reads them from there).
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return {
          sub: id,
          email: id,
          email_verified: !id.startsWith('unverified'),
          name: id.split('@')[0],
          groups: id.startsWith('admin') ? ['wb-admins', 'staff'] : ['staff'],
        };
      },
    };
  },
});

const server = provider.listen(config.port, '127.0.0.1', () => {
  console.log(`listening ${config.issuer}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
