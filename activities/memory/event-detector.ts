/**
 * The memory event detector lives with the workflow, which calls it on every
 * user message (workflow code cannot import activities); this re-export keeps
 * one copy for activity-side code and tests.
 */
export { detectMemoryEvent, MemoryEvent, shouldExtractNow } from '../../workflows/memory-events';
