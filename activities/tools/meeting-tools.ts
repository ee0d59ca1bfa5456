import { createHash } from 'node:crypto';
import { MongoServerError, type Collection, type Db } from 'mongodb';
import { z } from 'zod';
import { activityLog } from '../memory/memory-log';
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
  // FerretDB drops an empty array written by $setOnInsert, and documents written
  // that way are still stored: a missing list means nobody besides the user.
  attendees: z.array(z.string()).default([]),
  status: z.enum(['scheduled', 'cancelled']),
  createdBySession: z.string(),
  idempotencyKey: z.string(),
  createdAt: z.date(),
  cancelledAt: z.date().optional(),
});
export type MeetingDoc = z.infer<typeof MeetingDoc>;

export const MEETINGS_COLLECTION = 'meetings';

function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
}

function parseMeeting(doc: unknown): MeetingDoc {
  const parsed = MeetingDoc.safeParse(doc);
  if (!parsed.success) {
    const id = (doc as { _id?: unknown })?._id;
    throw new ToolPermanentError(`meeting document ${String(id)} in MongoDB is malformed (${describeIssues(parsed.error)})`);
  }
  return parsed.data;
}

/** MongoDB's duplicate key error: the document with this _id already exists. */
const isDuplicateKey = (err: unknown): boolean => err instanceof MongoServerError && err.code === 11000;

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

// Without an offset the instant is ambiguous (it would be read in the worker's
// time zone), so such a time is refused and the model told how to fix it.
const isoDateTime = z.iso.datetime({
  offset: true,
  error: 'must be an ISO 8601 date-time with a UTC offset, e.g. 2025-03-18T14:00:00+01:00 or 2025-03-18T13:00:00Z; add the offset of the user\'s time zone',
});

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
    // Inviting anyone sends the subject and time to them: `external`, confirmed.
    externalWhen: { argument: 'attendees' },
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
      // A plain insert keyed on the idempotency key: a retry meets the duplicate key and
      // returns the meeting the first attempt made. (An upsert with $setOnInsert loses
      // empty arrays on FerretDB.)
      try {
        await meetings.insertOne(doc);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const stored = parseMeeting(await meetings.findOne({ _id: meetingId }));
      if (stored.idempotencyKey !== ctx.idempotencyKey || stored.tenant !== doc.tenant || stored.user !== doc.user) {
        throw new ToolPermanentError(`meeting id ${meetingId} is already taken by another request; call the tool again`);
      }
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
      const docs: unknown[] = await meetings.find(filter).sort({ startTime: 1 }).limit(args.limit).toArray();
      // One malformed document must not hide every other meeting: it is skipped, logged and counted.
      const listed: Array<ReturnType<typeof publicMeeting>> = [];
      let unreadable = 0;
      for (const doc of docs) {
        const parsed = MeetingDoc.safeParse(doc);
        if (parsed.success) {
          listed.push(publicMeeting(parsed.data));
          continue;
        }
        unreadable++;
        activityLog.warn(`skipped malformed meeting document ${String((doc as { _id?: unknown })._id)}: ${describeIssues(parsed.error)}`, {
          tenant: ctx.namespace.tenant,
          user: ctx.namespace.user,
        });
      }
      return {
        count: listed.length,
        meetings: listed,
        ...(unreadable > 0
          ? {
              unreadable,
              note: `${unreadable} stored meeting${unreadable === 1 ? '' : 's'} could not be read and ${unreadable === 1 ? 'is' : 'are'} not listed; tell the user the list may be incomplete.`,
            }
          : {}),
      };
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
