/** Kubernetes Events on an object (core/v1), as `kubectl describe` shows them. */
import { truncateText } from '../api/fit.ts';
import type { KubeClient } from './client.ts';
import type { KubeObject } from './resources.ts';

/** Enough of an object to attach an Event to it. */
export type EventSubject = Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>;

export type EventType = 'Normal' | 'Warning';

export interface EventSink {
  record(object: EventSubject, type: EventType, reason: string, message: string): Promise<void>;
}

/**
 * events.k8s.io/v1 refuses a note over 1 KiB (core/v1 takes more, but kubectl describe shows a
 * line, and a message copied from elsewhere could be anything): cut to that, with a marker.
 */
/** A core/v1 Event as people are shown it (janus status, the web view's timeline). */
export interface ShownEvent {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  metadata?: { creationTimestamp?: string };
}

export const MAX_EVENT_MESSAGE = 1024;

export class EventRecorder implements EventSink {
  readonly #client: KubeClient;
  readonly #component: string;
  readonly #instance: string;
  readonly #onError: (e: unknown) => void;

  constructor(
    client: KubeClient,
    opts: { component: string; instance: string; onError?: (e: unknown) => void },
  ) {
    this.#client = client;
    this.#component = opts.component;
    this.#instance = opts.instance;
    this.#onError = opts.onError ?? (() => {});
  }

  /** Records an Event; a failure is reported to onError and never fails the caller. */
  async record(object: EventSubject, type: EventType, reason: string, message: string): Promise<void> {
    const now = new Date();
    const namespace = object.metadata.namespace ?? 'default';
    const text = truncateText(message, MAX_EVENT_MESSAGE);
    try {
      await this.#client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${namespace}/events`,
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { generateName: `${object.metadata.name}.`, namespace },
          involvedObject: {
            apiVersion: object.apiVersion,
            kind: object.kind,
            name: object.metadata.name,
            namespace: object.metadata.namespace,
            uid: object.metadata.uid,
            resourceVersion: object.metadata.resourceVersion,
          },
          type,
          reason,
          message: text,
          source: { component: this.#component },
          reportingComponent: this.#component,
          reportingInstance: this.#instance,
          firstTimestamp: now.toISOString(),
          lastTimestamp: now.toISOString(),
          count: 1,
        },
      });
    } catch (e) {
      this.#onError(e);
    }
  }
}

/** Discards events: for commands that act without a controller identity. */
export const noEvents: EventSink = { record: async () => {} };
