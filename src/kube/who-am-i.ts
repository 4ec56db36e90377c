import type { KubeClient } from './client.ts';

/**
 * Who the API server says we are (SelfSubjectReview): the user in audit messages and results.
 * Undefined if it will not say; `onError` hears why, when a request failed.
 */
export async function whoAmI(
  client: Pick<KubeClient, 'request'>,
  onError?: (error: unknown) => void,
): Promise<string | undefined> {
  try {
    const review = await client.request<{ status?: { userInfo?: { username?: string } } }>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    return review.status?.userInfo?.username;
  } catch (error) {
    onError?.(error);
    return undefined;
  }
}
