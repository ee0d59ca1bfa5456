import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { z } from 'zod';
import { defineTool, type NativeTool } from './native-tool';
import { ToolInputError, ToolPermanentError } from './tool-errors';

/** A meeting as stored in MongoDB; documents are parsed on read, never trusted. */
export const MeetingDoc = z.object({
  _id: z.string(),
  tenant: z.string(),
  user: z.string(),
  subject: z.string(),
  startTime: z.date(),
  endTime: z.date(),
  attendees: z.array(z.string()),
  status: z.enum(['scheduled', 'cancelled']),
  createdBySession: z.string(),
  idempotencyKey: z.string(),
  createdAt: z.date(),
  cancelledAt: z.date().optional(),
});
export type MeetingDoc = z.infer<typeof MeetingDoc>;

export const MEETINGS_COLLECTION = 'meetings';

function parseMeeting(doc: unknown): MeetingDoc {
  const parsed = MeetingDoc.safeParse(doc);
  if (!parsed.success) {
    const id = (doc as { _id?: unknown })?._id;
    const fields = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ToolPermanentError(`meeting document ${String(id)} in MongoDB is malformed (${fields})`);
  }
  return parsed.data;
}

function publicMeeting(m: MeetingDoc) {
  return {
    meetingId: m._id,
    subject: m.subject,
    startTime: m.startTime.toISOString(),
    endTime: m.endTime.toISOString(),
    attendees: m.attendees,
    status: m.status,
  };
}

const isoDateTime = z.iso.datetime({ offset: true, local: true });

/** Meeting tools over one MongoDB collection, scoped to the session's tenant and user. */
export function meetingTools(db: Db): NativeTool[] {
  const meetings: Collection<MeetingDoc> = db.collection<MeetingDoc>(MEETINGS_COLLECTION);

  const create = defineTool({
    name: 'create_meeting',
    description:
      'Schedules a meeting for the user. Use it when the user asks to book, schedule or set up a meeting and has given (or ' +
      'agreed to) a subject and a time. Do not use it to move or cancel a meeting, or to check availability (use ' +
      'local_list_meetings). If the user says "as soon as possible" without a time, call local_current_time and start two ' +
      'hours from now; if no duration is given, make it 30 minutes. Times are ISO 8601 with an offset, e.g. ' +
      '2025-03-18T14:00:00+01:00; end_time must be after start_time.',
    parameters: z.object({
      subject: z.string().min(1).max(200).describe('What the meeting is about, e.g. "Project weekly sync".'),
      start_time: isoDateTime
        .describe('Start, ISO 8601 date-time with offset.')
        .meta({ format: 'date-time', examples: ['2025-03-18T14:00:00+01:00'] }),
      end_time: isoDateTime
        .describe('End, ISO 8601 date-time with offset; must be after start_time.')
        .meta({ format: 'date-time', examples: ['2025-03-18T14:30:00+01:00'] }),
      attendees: z
        .array(z.email())
        .max(50)
        .default([])
        .describe('Attendee email addresses, e.g. ["ana@example.com"]. Leave empty when only the user attends.'),
    }),
    risk: 'write',
    idempotent: true,
    async execute(args, ctx) {
      const start = new Date(args.start_time);
      const end = new Date(args.end_time);
      if (!(end > start)) throw new ToolInputError('end_time must be after start_time');
      // The id comes from the idempotency key, so a retried call finds the meeting it already made.
      const meetingId = `mtg_${createHash('sha256').update(ctx.idempotencyKey).digest('hex').slice(0, 12)}`;
      const doc: MeetingDoc = {
        _id: meetingId,
        tenant: ctx.namespace.tenant,
        user: ctx.namespace.user,
        subject: args.subject,
        startTime: start,
        endTime: end,
        attendees: args.attendees,
        status: 'scheduled',
        createdBySession: ctx.sessionId,
        idempotencyKey: ctx.idempotencyKey,
        createdAt: new Date(),
      };
      await meetings.updateOne({ _id: meetingId }, { $setOnInsert: doc }, { upsert: true });
      const stored = parseMeeting(await meetings.findOne({ _id: meetingId }));
      return { created: true, meeting: publicMeeting(stored) };
    },
  });

  const list = defineTool({
    name: 'list_meetings',
    description:
      'Lists the user\'s meetings, soonest first. Use it to answer "what meetings do I have", to check for conflicts before ' +
      'scheduling, or to find the meetingId needed to cancel one. Optional from/to bound the start time (ISO 8601 with ' +
      'offset); by default only scheduled (not cancelled) meetings are returned, at most 20.',
    parameters: z.object({
      from: isoDateTime.optional().describe('Only meetings starting at or after this time.').meta({ format: 'date-time' }),
      to: isoDateTime.optional().describe('Only meetings starting before this time.').meta({ format: 'date-time' }),
      include_cancelled: z.boolean().default(false).describe('Also list cancelled meetings.'),
      limit: z.number().int().min(1).max(100).default(20).describe('Maximum number of meetings to return.'),
    }),
    risk: 'read',
    async execute(args, ctx) {
      const filter: Record<string, unknown> = { tenant: ctx.namespace.tenant, user: ctx.namespace.user };
      if (!args.include_cancelled) filter.status = 'scheduled';
      const range: Record<string, Date> = {};
      if (args.from) range.$gte = new Date(args.from);
      if (args.to) range.$lt = new Date(args.to);
      if (Object.keys(range).length) filter.startTime = range;
      const docs = await meetings.find(filter).sort({ startTime: 1 }).limit(args.limit).toArray();
      return { count: docs.length, meetings: docs.map((d) => publicMeeting(parseMeeting(d))) };
    },
  });

  const cancel = defineTool({
    name: 'cancel_meeting',
    description:
      'Cancels one of the user\'s meetings by its meetingId (from local_list_meetings). Use only when the user clearly asks ' +
      'to cancel a specific meeting; the user is asked to confirm before it runs. Do not use it to reschedule: create the ' +
      'new meeting first, then cancel the old one if the user wants.',
    parameters: z.object({
      meeting_id: z.string().regex(/^mtg_[0-9a-f]{12}$/).describe('The meetingId, e.g. "mtg_1a2b3c4d5e6f".'),
      reason: z.string().max(500).optional().describe('Why it is cancelled, if the user said.'),
    }),
    risk: 'destructive',
    idempotent: true,
    async execute(args, ctx) {
      const owner = { _id: args.meeting_id, tenant: ctx.namespace.tenant, user: ctx.namespace.user };
      const existing = await meetings.findOne(owner);
      if (!existing) throw new ToolPermanentError(`no meeting ${args.meeting_id} exists for this user; list the meetings to find the right id`);
      const current = parseMeeting(existing);
      if (current.status === 'cancelled') return { cancelled: true, alreadyCancelled: true, meeting: publicMeeting(current) };
      await meetings.updateOne({ ...owner, status: 'scheduled' }, { $set: { status: 'cancelled', cancelledAt: new Date() } });
      const after = parseMeeting(await meetings.findOne(owner));
      return { cancelled: true, alreadyCancelled: false, meeting: publicMeeting(after) };
    },
  });

  return [create, list, cancel] as unknown as NativeTool[];
}

export async function ensureMeetingIndexes(db: Db): Promise<void> {
  await db.collection(MEETINGS_COLLECTION).createIndex({ tenant: 1, user: 1, startTime: 1 });
}
