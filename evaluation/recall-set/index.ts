import { EN_PEOPLE_1 } from './en-people-1';
import { EN_PEOPLE_2 } from './en-people-2';
import { buildSet, type RecallSet } from './recall-set-types';
import { ZH_PEOPLE } from './zh-people';

export * from './recall-set-types';

/** At least 200 English cases (ten people). */
export const EN_RECALL_SET: RecallSet = buildSet('en', [...EN_PEOPLE_1, ...EN_PEOPLE_2]);
/** At least 100 Chinese cases (five people). */
export const ZH_RECALL_SET: RecallSet = buildSet('zh', ZH_PEOPLE);

export const RECALL_SETS: readonly RecallSet[] = [EN_RECALL_SET, ZH_RECALL_SET];
