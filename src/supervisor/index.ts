// The supervision layer's public API: supervisors, child specs, exit reasons, clocks and events.

export { type Clock, FakeClock, realClock, systemClock } from './clock.ts';
export { crash, describeCause, describeExit, type ExitReason, isAbnormal, killed, normal, shutdown } from './exit-reason.ts';
export {
  type ChildHandle,
  type ChildSpec,
  type ChildSpecValidation,
  type ChildType,
  DEFAULT_CHILD_TYPE,
  DEFAULT_RESTART,
  DEFAULT_SUPERVISOR_SHUTDOWN,
  DEFAULT_WORKER_SHUTDOWN_MS,
  type ResolvedChildSpec,
  resolveChildSpec,
  type RestartType,
  type Shutdown,
  type StartFunction,
  validateChildSpec,
} from './child-spec.ts';
export { DEFAULT_MAX_RESTARTS, DEFAULT_PERIOD_MS, restartIntensity, type RestartIntensityVerdict } from './restart-intensity.ts';
export { childLifecycleMachine, type LifecycleEvent, type LifecycleState } from './lifecycle.ts';
export { RestartIntensityError, type RestartIntensityDetails, SupervisorError, type SupervisorErrorCode } from './errors.ts';
export {
  DEFAULT_DYNAMIC_SUPERVISOR_NAME,
  DEFAULT_MAX_CHILDREN,
  DEFAULT_SUPERVISOR_NAME,
  type DynamicChildTemplate,
  type DynamicSupervisorFlags,
  type Strategy,
  type SupervisorFlags,
  validateDynamicSupervisorFlags,
  validateSupervisorFlags,
} from './supervisor-flags.ts';
export type { SupervisorEvent, SupervisorOptions } from './supervisor-events.ts';
export type { ChildInfo } from './supervisor-core.ts';
export { type ChildCounts, Supervisor } from './supervisor.ts';
export { DynamicSupervisor } from './dynamic-supervisor.ts';
export { DEFAULT_ROOT_NAME, giveUpMessage, type RootOptions, startRoot } from './root.ts';
