/**
 * A check's credentials, read from a Secret in the Transaction's namespace through the Objects
 * client the caller passes: the one impersonating the Transaction's ServiceAccount. Janus never
 * reads them with its own rights, so a transaction can use only what its account may read.
 */
import type { CheckCredentials } from '../api/v1alpha1/analysis.ts';
import { isForbidden, isNotFound } from '../kube/errors.ts';
import type { KubeObject, Objects } from '../kube/resources.ts';

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

/** The credentials could not be read: names the Secret, the key and who asked. */
export class CredentialsError extends Error {
  override readonly name = 'CredentialsError';
}

/** The Authorization header the credentials give, or undefined for none. */
export async function authorizationHeader(
  credentials: CheckCredentials | undefined,
  namespace: string,
  objects: Objects,
): Promise<string | undefined> {
  if (credentials?.bearerToken) {
    const { name, key } = credentials.bearerToken.secretKeyRef;
    const token = await secretValue(objects, namespace, name, key);
    return `Bearer ${token.trim()}`;
  }
  if (credentials?.basicAuth) {
    const { name } = credentials.basicAuth.secretRef;
    const username = await secretValue(objects, namespace, name, 'username');
    const password = await secretValue(objects, namespace, name, 'password');
    return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  }
  return undefined;
}

async function secretValue(objects: Objects, namespace: string, name: string, key: string): Promise<string> {
  const who = objects.client.impersonating ?? "the controller's own identity";
  const what = `Secret "${namespace}/${name}"`;
  let secret: Secret;
  try {
    secret = await objects.get<Secret>({ apiVersion: 'v1', kind: 'Secret', namespace, name });
  } catch (e) {
    if (isForbidden(e)) {
      throw new CredentialsError(
        `${who} may not read ${what} (a check's credentials are read as the Transaction's ServiceAccount: grant it get on that Secret); the API server said: ${e.serverMessage}`,
        { cause: e },
      );
    }
    if (isNotFound(e))
      throw new CredentialsError(`${what}, named by a check's credentials, does not exist`, { cause: e });
    throw e;
  }
  const encoded = secret.data?.[key];
  if (encoded === undefined) throw new CredentialsError(`${what} has no key "${key}"`);
  return Buffer.from(encoded, 'base64').toString('utf8');
}
