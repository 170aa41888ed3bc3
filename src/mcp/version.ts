// Protocol version negotiation: the versions super-pi speaks, newest first, and the pick for a client.

export const supportedVersions = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export type ProtocolVersion = (typeof supportedVersions)[number];
export const LATEST_VERSION: ProtocolVersion = supportedVersions[0];

/** The client's version when super-pi speaks it, else the newest super-pi speaks. */
export function negotiateVersion(requested: unknown): ProtocolVersion {
  return isSupportedVersion(requested) ? requested : LATEST_VERSION;
}

export function isSupportedVersion(v: unknown): v is ProtocolVersion {
  return typeof v === 'string' && (supportedVersions as readonly string[]).includes(v);
}

/** `v` is `since` or a later revision (the dates sort as strings). */
const atLeast = (v: ProtocolVersion, since: ProtocolVersion): boolean => v >= since;

/** Features by version: which fields a reply may carry for the negotiated version. */
export const versionFeatures = (v: ProtocolVersion) => ({
  /** Tool annotations and `completions` arrived in 2025-03-26. */
  annotations: atLeast(v, '2025-03-26'),
  completions: atLeast(v, '2025-03-26'),
  progressMessage: atLeast(v, '2025-03-26'),
  /** JSON-RPC batches: allowed by 2025-03-26 (and by JSON-RPC itself under 2024-11-05), removed in 2025-06-18. */
  batches: !atLeast(v, '2025-06-18'),
  /** `title`, `outputSchema`, `structuredContent`, elicitation arrived in 2025-06-18. */
  structuredContent: atLeast(v, '2025-06-18'),
  titles: atLeast(v, '2025-06-18'),
  elicitation: atLeast(v, '2025-06-18'),
  /**
   * 2025-11-25: `Implementation.description` and `icons`, and elicitation modes: a client declares `form`
   * and/or `url` under `elicitation` (an empty object still means form, as before).
   */
  implementationDescription: atLeast(v, '2025-11-25'),
  icons: atLeast(v, '2025-11-25'),
  elicitationModes: atLeast(v, '2025-11-25'),
});
