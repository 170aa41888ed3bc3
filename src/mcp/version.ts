// Protocol version negotiation: the versions super-pi speaks, newest first, and the pick for a client.

export const supportedVersions = ['2025-06-18', '2025-03-26', '2024-11-05'] as const;
export type ProtocolVersion = (typeof supportedVersions)[number];
export const LATEST_VERSION: ProtocolVersion = supportedVersions[0];

/** The client's version when super-pi speaks it, else the newest super-pi speaks. */
export function negotiateVersion(requested: unknown): ProtocolVersion {
  return isSupportedVersion(requested) ? requested : LATEST_VERSION;
}

export function isSupportedVersion(v: unknown): v is ProtocolVersion {
  return typeof v === 'string' && (supportedVersions as readonly string[]).includes(v);
}

/** Features by version: which fields a reply may carry for the negotiated version. */
export const versionFeatures = (v: ProtocolVersion) => ({
  /** Tool annotations and `completions` arrived in 2025-03-26. */
  annotations: v !== '2024-11-05',
  completions: v !== '2024-11-05',
  progressMessage: v !== '2024-11-05',
  /** JSON-RPC batches: allowed by 2025-03-26 (and by JSON-RPC itself under 2024-11-05), removed in 2025-06-18. */
  batches: v !== '2025-06-18',
  /** `title`, `outputSchema`, `structuredContent`, elicitation arrived in 2025-06-18. */
  structuredContent: v === '2025-06-18',
  titles: v === '2025-06-18',
  elicitation: v === '2025-06-18',
});
