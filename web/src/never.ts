/** The end of an exhaustive switch: a compile error when a case is missing, nothing at run time. */
export const exhausted = (_value: never): null => null;
