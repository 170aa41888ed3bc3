// The harness ids: the enum of `harness_task`'s `harness` argument and of prompt completions.

export const harnessIds = ['super-pi-code', 'super-pi-assistant', 'super-pi-librarian', 'super-pi-planner'] as const;
export type HarnessId = (typeof harnessIds)[number];
export const DEFAULT_HARNESS: HarnessId = 'super-pi-code';

export function isHarnessId(id: unknown): id is HarnessId {
  return typeof id === 'string' && (harnessIds as readonly string[]).includes(id);
}
