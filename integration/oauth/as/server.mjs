// The authorization server integration/oauth issues tokens from: the
// OpenID-certified oidc-provider with the client credentials grant and
// resource indicators (RFC 8707), issuing access tokens as JWTs (RFC 9068)
// whose audience is the requested resource. It listens on 127.0.0.1 only.
//
// Env: RCP_OAUTH_PORT (required), RCP_OAUTH_CLIENTS (required: JSON array of
// {client_id, client_secret, scope}).
// Prints "ready <issuer>" on stdout once it listens.
import http from 'node:http';
import crypto from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

const port = Number(process.env.RCP_OAUTH_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('RCP_OAUTH_PORT is required');
const clients = JSON.parse(process.env.RCP_OAUTH_CLIENTS || '[]');
if (!Array.isArray(clients) || clients.length === 0) throw new Error('RCP_OAUTH_CLIENTS is required');

const issuer = `http://127.0.0.1:${port}`;
// The scopes a protected resource served by the sidecar knows.
const resourceScopes = 'rcp.read rcp.write rcp.admin';

// A resource indicator is accepted when it is an absolute http(s) URL on a
// loopback host without a fragment: the sidecars under test listen there.
function loopbackResource(indicator) {
  let u;
  try {
    u = new URL(indicator);
  } catch {
    return false;
  }
  return (u.protocol === 'http:' || u.protocol === 'https:') && u.hash === '' &&
    ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
}

const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: crypto.randomUUID(), use: 'sig', alg: 'RS256' };

const provider = new Provider(issuer, {
  clients: clients.map((c) => ({
    client_id: c.client_id,
    client_secret: c.client_secret,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: c.scope,
  })),
  jwks: { keys: [jwk] },
  cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
  scopes: resourceScopes.split(' '),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: false },
    revocation: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (!loopbackResource(indicator)) throw new errors.InvalidTarget();
        return {
          scope: resourceScopes,
          audience: indicator,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});

const server = http.createServer(provider.callback());
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`ready ${issuer}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
