/**
 * The citation check lives with the workflow, which runs it on every answer
 * (workflow code cannot import activities); activity-side code and tests use
 * the same module through this re-export, so there is one copy.
 */
export { checkCitations, citationCorrection, type CitationCheck } from '../../workflows/memory-citations';
