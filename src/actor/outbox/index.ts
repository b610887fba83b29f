export {
  type DeliverFn,
  type Delivery,
  OUTBOX_SNAPSHOT_AFTER_DEFAULT,
  Outbox,
  type OutboxAccepted,
  type OutboxCommand,
  type OutboxConfirm,
  type OutboxGetStatus,
  type OutboxOptions,
  type OutboxRejected,
  type OutboxSend,
  type OutboxSendReply,
  type OutboxStatus,
  type OutboxUnconfirmedWarning,
} from "./outbox.js";
export { defaultOutboxSettings, type OutboxSettings, outboxSettings } from "./outbox-settings.js";
export {
  applyOutboxEvent,
  emptyOutboxState,
  type OutboxEntry,
  type OutboxEvent,
  type OutboxSnapshot,
  type OutboxState,
  outboxSnapshotOf,
  outboxStateOf,
} from "./outbox-state.js";
export {
  admitsSend,
  type PlannedAttempt,
  type PlannerSettings,
  RedeliveryPlanner,
  redeliveryDelayMs,
  type TickPlan,
} from "./redelivery-planner.js";
