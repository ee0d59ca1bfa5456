import { payloadBytes } from './payload-budget';
import type { ToolChange } from './session-types';
import type { ToolSpec } from './tool-spec';

/**
 * What a session remembers of each tool it has seen: the hash of its
 * description and schema (the pin), and the text itself, so that a tool that
 * changed afterwards is offered to the model as it was pinned until a person
 * approves the change. Without the text (over the size bound, or a session
 * from before texts were kept) a changed tool is withheld instead.
 *
 * Carried across continue-as-new (`CarriedState.toolHashes` and
 * `toolPinTexts`) and written to the archive (`ArchivedSession.toolPins`).
 */
export interface PinnedText {
  description: string;
  parameters: Record<string, unknown>;
}

/** A pin as the archive stores it: the schema as JSON text, since MongoDB refuses some JSON Schema keys (`$ref`, dotted names). */
export interface ArchivedToolPin {
  name: string;
  hash: string;
  description?: string;
  parametersJson?: string;
}

/** One tool's text is kept when it is at most this large (description plus schema, as JSON). */
export const MAX_PIN_TEXT_BYTES = 16_000;
/** All kept texts together stay under this, so the carried state and the archive stay small. */
export const MAX_PIN_TEXTS_BYTES = 96_000;
/** Text shown to the person deciding: each description and schema cut to this. */
const CHANGE_TEXT_CHARS = 4_000;
const CHANGE_SCHEMA_BYTES = 8_000;

/** What the model is offered for one tool. */
export interface OfferedTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const cut = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`);

export class ToolPins {
  private readonly hashes: Map<string, string>;
  private readonly texts: Map<string, PinnedText>;
  private textBytes = 0;
  /** Offers made, by the text object offered: the tool itself, or its pinned text. */
  private readonly offers = new WeakMap<PinnedText, OfferedTool>();

  constructor(hashes: ReadonlyArray<readonly [string, string]> = [], texts: ReadonlyArray<readonly [string, PinnedText]> = []) {
    this.hashes = new Map(hashes);
    this.texts = new Map();
    for (const [name, text] of texts) if (this.hashes.has(name)) this.keepText(name, text);
  }

  get size(): number {
    return this.hashes.size;
  }

  hashOf(name: string): string | undefined {
    return this.hashes.get(name);
  }

  /** True when the tool's current hash is not the one this session pinned (a tool never seen has no pin and is not changed). */
  changed(spec: Pick<ToolSpec, 'name' | 'hash'>): boolean {
    const pinned = this.hashes.get(spec.name);
    return pinned !== undefined && pinned !== spec.hash;
  }

  /**
   * Pins tools seen for the first time, with their text. A tool whose pin
   * matches but whose text was not kept (a session from before texts were)
   * gets its text now: it is the text that was pinned.
   */
  observe(tools: readonly ToolSpec[]): void {
    for (const tool of tools) {
      const pinned = this.hashes.get(tool.name);
      if (pinned === undefined) {
        this.hashes.set(tool.name, tool.hash);
        this.keepText(tool.name, tool);
      } else if (pinned === tool.hash && !this.texts.has(tool.name)) {
        this.keepText(tool.name, tool);
      }
    }
  }

  /** A person approved the change: the pin moves to the tool as it is now. */
  approve(tool: ToolSpec): void {
    this.hashes.set(tool.name, tool.hash);
    this.dropText(tool.name);
    this.keepText(tool.name, tool);
  }

  /**
   * What the model may see of each tool: the current text for unchanged
   * tools (or when re-approval is off), the pinned text for changed ones,
   * and nothing for a changed tool whose pinned text was not kept.
   */
  offer(tools: readonly ToolSpec[], reapproveChanged: boolean): OfferedTool[] {
    const offered: OfferedTool[] = [];
    for (const tool of tools) {
      if (!reapproveChanged || !this.changed(tool)) {
        offered.push(this.offeredAs(tool, tool));
        continue;
      }
      const pinned = this.texts.get(tool.name);
      if (pinned) offered.push(this.offeredAs(tool, pinned));
    }
    return offered;
  }

  /**
   * The same offer object for the same tool and text, step after step: the
   * prompt ledger finds an object it has already sent by identity, where a
   * new one would be turned into JSON again (every tool's schema, every
   * step). Keyed by the text's object, which a catalog read or a pin change
   * replaces, never changes in place.
   */
  private offeredAs(tool: ToolSpec, text: PinnedText): OfferedTool {
    let offer = this.offers.get(text);
    if (offer?.name !== tool.name) {
      offer = { name: tool.name, description: text.description, parameters: text.parameters };
      this.offers.set(text, offer);
    }
    return offer;
  }

  /** The text this session pinned for a tool, when it kept one. */
  pinnedText(name: string): PinnedText | undefined {
    return this.texts.get(name);
  }

  /** Old and new side by side, for the person asked to approve a changed tool; bounded so the event always fits. */
  describeChange(tool: ToolSpec): ToolChange {
    const pinned = this.texts.get(tool.name);
    const change: ToolChange = { description: cut(tool.description, CHANGE_TEXT_CHARS), parametersChanged: pinned ? !sameJson(pinned.parameters, tool.parameters) : true };
    if (pinned) change.previousDescription = cut(pinned.description, CHANGE_TEXT_CHARS);
    if (change.parametersChanged) {
      if (pinned && payloadBytes(pinned.parameters) <= CHANGE_SCHEMA_BYTES) change.previousParameters = pinned.parameters;
      if (payloadBytes(tool.parameters) <= CHANGE_SCHEMA_BYTES) change.parameters = tool.parameters;
    }
    return change;
  }

  hashEntries(): Array<[string, string]> {
    return [...this.hashes.entries()];
  }

  textEntries(): Array<[string, PinnedText]> {
    return [...this.texts.entries()];
  }

  /** The pins as the archive stores them. */
  toArchive(): ArchivedToolPin[] {
    return [...this.hashes.entries()].map(([name, hash]) => {
      const text = this.texts.get(name);
      return text ? { name, hash, description: text.description, parametersJson: JSON.stringify(text.parameters) } : { name, hash };
    });
  }

  /** Pins read back from an archive; a text that does not parse is left out (the tool is then withheld when it changes). */
  static fromArchive(pins: readonly ArchivedToolPin[]): ToolPins {
    const restored = new ToolPins(pins.map((p) => [p.name, p.hash] as const));
    for (const pin of pins) {
      if (pin.description === undefined || pin.parametersJson === undefined) continue;
      try {
        const parameters = JSON.parse(pin.parametersJson) as unknown;
        if (typeof parameters === 'object' && parameters !== null && !Array.isArray(parameters)) {
          restored.keepText(pin.name, { description: pin.description, parameters: parameters as Record<string, unknown> });
        }
      } catch {
        // unreadable text: no text kept for this tool
      }
    }
    return restored;
  }

  /** Replaces this session's pins with `other`'s (a restore from the archive). */
  replaceWith(other: ToolPins): void {
    this.hashes.clear();
    this.texts.clear();
    this.textBytes = 0;
    for (const [name, hash] of other.hashes) this.hashes.set(name, hash);
    for (const [name, text] of other.texts) this.keepText(name, text);
  }

  private keepText(name: string, source: PinnedText): void {
    const text = { description: source.description, parameters: source.parameters };
    const bytes = payloadBytes(text);
    if (bytes > MAX_PIN_TEXT_BYTES || this.textBytes + bytes > MAX_PIN_TEXTS_BYTES) return;
    this.texts.set(name, text);
    this.textBytes += bytes;
  }

  private dropText(name: string): void {
    const text = this.texts.get(name);
    if (!text) return;
    this.texts.delete(name);
    this.textBytes -= payloadBytes(text);
  }
}
