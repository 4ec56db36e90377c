/**
 * What the controller writes into a Transaction's status always fits the CRD's schema (see
 * src/api/fit.ts), and when the API server refuses a status anyway (a 422 for a reason nobody
 * thought of, an admission policy, an object grown too large), the transition still happens with
 * a minimal status that surely fits: a refused write must never stop a deadline or keep locks
 * held. Pure.
 */
import { fitToSchema, schemaAt, truncateText } from '../api/fit.ts';
import {
  type ItemHealth,
  type Phase,
  type TransactionStatus,
  transactionStatusSchema,
} from '../api/v1alpha1/index.ts';
import type { Refusal } from '../kube/errors.ts';
import type { PhaseDetail } from './status.ts';

const STATUS = transactionStatusSchema.openApi;

/** The status with every string fitted to its field's maxLength and pattern. */
export const fitStatus = (status: TransactionStatus): TransactionStatus => fitToSchema(STATUS, status);

/** An item's health as it will be stored: compare with this, not the raw assessment. */
export const fitItemHealth = (health: ItemHealth): ItemHealth =>
  fitToSchema(schemaAt(STATUS, 'items', '*', 'health'), health);

/** A condition's reason and message as they will be stored. */
export function fitDetail(detail: PhaseDetail): PhaseDetail {
  const condition = schemaAt(STATUS, 'conditions', '*');
  return fitToSchema(condition, { reason: detail.reason, message: detail.message });
}

/** The reason of a transition written without its details because the API server refused them. */
export const STATUS_WRITE_REFUSED = 'StatusWriteRefused';

/** Short enough that the refusal's own words never make the fallback too long. */
const MAX_REFUSAL_MESSAGE = 1024;

/**
 * The status to write when `refused` was refused: every piece of free text the controller copies
 * from elsewhere dropped (items' errors and health reasons and messages, the health check's
 * message), the conditions as last accepted, the rest kept (progress, items' outcomes, deadlines,
 * the store: what crash safety needs). The phase's conditions then say StatusWriteRefused.
 */
export function refusedStatus(
  refused: TransactionStatus,
  persisted: Pick<TransactionStatus, 'conditions'>,
): TransactionStatus {
  const { health, items, conditions: _conditions, ...rest } = refused;
  const out: TransactionStatus = {
    ...rest,
    ...(persisted.conditions && { conditions: persisted.conditions }),
  };
  if (items) {
    out.items = items.map(({ error: _error, health: itemHealth, ...item }) => {
      if (!itemHealth) return item;
      const { reason: _reason, message: _message, ...kept } = itemHealth;
      return { ...item, health: kept };
    });
  }
  if (health) {
    const { message: _message, ...check } = health;
    out.health = check;
  }
  return out;
}

/** The detail of the transition the fallback writes, naming what the API server refused. */
export function refusedDetail(phase: Phase, refusal: Refusal): PhaseDetail {
  const fields = refusal.fields.length > 0 ? refusal.fields.join(', ') : 'the status';
  const message = `the API server refused the status for ${phase} (${fields}), so it was written without its messages: ${refusal.message}`;
  return { reason: STATUS_WRITE_REFUSED, message: truncateText(message, MAX_REFUSAL_MESSAGE) };
}
