import { exponentialBuckets } from './prom.ts';

/** 0.05 s to 3277 s (~55 min): a transaction takes from a fraction of a second to its deadline. */
export const TRANSACTION_DURATION_BUCKETS = exponentialBuckets(0.05, 2, 17);

/** Changes per transaction; the CRD allows at most 512 (MAX_CHANGES), a directory 256. */
export const ITEM_COUNT_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 256, 512];

/** 0.01 s to 82 s: a fetch of the watched branch, from an up-to-date check to a slow remote. */
export const GIT_POLL_BUCKETS = exponentialBuckets(0.01, 2, 14);

/** 5 ms to 10 s: one reconcile of one Transaction. */
export const RECONCILE_BUCKETS = exponentialBuckets(0.005, 2, 12);

/** 10 ns to 1000 s, the workqueue buckets of controller-runtime, so its dashboards read ours. */
export const WORKQUEUE_BUCKETS = exponentialBuckets(1e-8, 10, 12);

/** client-go's rest_client_request_duration_seconds buckets. */
export const KUBE_REQUEST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
