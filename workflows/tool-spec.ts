import { z } from 'zod';
import { builtOnce } from './built-once';

/** Names the model sees: `local_<name>` or `mcp_<server>_<tool>`. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const schemas = builtOnce('tool-spec', () => {
  /**
   * How much harm a tool can do; decides retries and confirmation. `external`:
   * the call sends data to someone other than the user (an invitation, a
   * message, an outbound request), confirmed like `destructive`.
   */
  const RiskLevel = z.enum(['read', 'write', 'destructive', 'external']);

  /**
   * A per-call risk rule: the call is `external` when this argument is present
   * and not empty (an array with items, a string that is not blank, any other
   * value). Decided in the workflow from the call's arguments, so it is pure.
   */
  const ExternalWhen = z.object({ argument: z.string().min(1) });

  /**
   * A tool as the workflow sees it: plain data returned by an activity, so the
   * workflow never imports tool code and replay stays deterministic when the
   * catalog changes.
   */
  const ToolSpec = z.object({
    name: z.string().regex(TOOL_NAME_PATTERN),
    description: z.string().min(1),
    /** JSON schema of the arguments object. */
    parameters: z.record(z.string(), z.unknown()),
    risk: RiskLevel,
    /** Makes one call `external` depending on its arguments (e.g. a meeting with attendees). */
    externalWhen: ExternalWhen.optional(),
    /** True when the tool itself asks for confirmation regardless of its risk. */
    requiresConfirmation: z.boolean(),
    timeoutMs: z.number().int().positive(),
    maxAttempts: z.number().int().min(1),
    source: z.enum(['local', 'mcp']),
    /** Hash of the description and schema, to notice a tool that changed. */
    hash: z.string(),
  });

  const ToolCatalog = z.object({
    /** Hash over every tool's name and hash. */
    version: z.string(),
    tools: z.array(ToolSpec),
    /** Hash of `tools` exactly as returned (every field); absent from catalogs recorded before it. */
    digest: z.string().optional(),
    /**
     * The catalog is the one the caller said it holds (`GetToolCatalogInput.knownDigest`): `tools` is then
     * empty, and history does not record every schema again each turn.
     */
    unchanged: z.boolean().optional(),
  });
  return { RiskLevel, ExternalWhen, ToolSpec, ToolCatalog };
});

export const { RiskLevel, ExternalWhen, ToolSpec, ToolCatalog } = schemas;
export type RiskLevel = z.infer<typeof RiskLevel>;
export type ExternalWhen = z.infer<typeof ExternalWhen>;
export type ToolSpec = z.infer<typeof ToolSpec>;
export type ToolCatalog = z.infer<typeof ToolCatalog>;
