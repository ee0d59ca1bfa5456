/**
 * A small labelled set for choosing recall thresholds: a user message, a
 * memory as extraction writes it (third person), and whether recalling that
 * memory for that message would help (`related`) or mislead (`unrelated`).
 *
 * Related pairs include paraphrases that share few words, on purpose: they
 * show what a lexical embedder cannot see. Unrelated pairs include ones that
 * share a word or a theme (travel, friends, food) without being relevant,
 * which is where a low threshold lets noise in.
 */
export interface CalibrationPair {
  query: string;
  memory: string;
  related: boolean;
}

const related: Array<[string, string]> = [
  ['What is my name?', "The user's name is Ana Lima."],
  ['Do you remember my name?', "The user's name is Ana Lima."],
  ['Which city do I live in again?', 'The user lives in Lisbon.'],
  ['Find me a good restaurant near where I live', 'The user lives in Lisbon.'],
  ['Where do I work?', 'The user works at Acme Corp as a data engineer.'],
  ['Draft a short bio about my job', 'The user works at Acme Corp as a data engineer.'],
  ['Keep your answers concise please', 'The user prefers concise answers.'],
  ['Give me an answer, concise as usual', 'The user prefers concise answers.'],
  ['Write the weekly report', 'The user wants weekly reports written in Portuguese.'],
  ['In which language should the report be?', 'The user wants weekly reports written in Portuguese.'],
  ['Book a flight for my trip at the end of the month', 'The user is travelling to Berlin at the end of the month.'],
  ['What do I need for my Berlin trip?', 'The user is travelling to Berlin at the end of the month.'],
  ['Plan my marathon training for this week', 'The user is training for the Lisbon marathon in May.'],
  ['How many weeks until my marathon?', 'The user is training for the Lisbon marathon in May.'],
  ["Suggest a dinner recipe, remember I'm vegetarian", 'The user is vegetarian.'],
  ['Suggest a vegetarian dinner recipe', 'The user is vegetarian.'],
  ['Recommend a restaurant for my anniversary dinner', 'The user is vegetarian.'],
  ['What programming language do I like to use?', 'The user prefers TypeScript for new projects.'],
  ['Start a new project skeleton for me', 'The user prefers TypeScript for new projects.'],
  ['Schedule the meeting in my time zone', "The user's time zone is Europe/Lisbon."],
  ['What time zone am I in?', "The user's time zone is Europe/Lisbon."],
  ["What's my dog's name?", "The user's dog is called Biscuit."],
  ['Buy a birthday present for my dog', "The user's dog is called Biscuit."],
  ['Remind me what my manager is called', "The user's manager is Rui Costa."],
  ['Send the summary to my manager', "The user's manager is Rui Costa."],
  ['No emojis in the reply please', 'The user avoids emojis in replies.'],
  ['Reply to this email for me', 'The user avoids emojis in replies.'],
  ['Set up my meetings for next week, mornings only', 'The user prefers meetings in the morning.'],
  ['When do I like to have meetings?', 'The user prefers meetings in the morning.'],
  ['Help me study for my exam', 'The user is preparing for the AWS certification exam in June.'],
  ['When is my AWS certification exam?', 'The user is preparing for the AWS certification exam in June.'],
  ['What is my daughter called?', "The user's daughter is named Sofia."],
  ["Ideas for Sofia's birthday party", "The user's daughter is named Sofia."],
  ['Which editor do I use?', 'The user uses Neovim as their editor.'],
  ['Configure my editor for TypeScript', 'The user uses Neovim as their editor.'],
  ['What car do I drive?', 'The user drives an electric car, a Renault Zoe.'],
  ['Find a charging station for my car', 'The user drives an electric car, a Renault Zoe.'],
  ['Explain it with metric units', 'The user prefers metric units.'],
  ['Convert the recipe quantities for me', 'The user prefers metric units.'],
  ['Which team am I on?', 'The user is on the payments platform team.'],
];

const unrelated: Array<[string, string]> = [
  ['Recommend weekend activities for a friend', 'The user is travelling to Berlin at the end of the month.'],
  ['Recommend weekend activities for a friend', 'The user is travelling at month end.'],
  ['Recommend weekend activities for a friend', 'The user is training for the Lisbon marathon in May.'],
  ['What is the capital of Australia?', "The user's name is Ana Lima."],
  ['What is the capital of Australia?', 'The user lives in Lisbon.'],
  ['Explain how HTTP caching works', 'The user is vegetarian.'],
  ['Explain how HTTP caching works', "The user's dog is called Biscuit."],
  ['Summarize this article about climate policy', 'The user works at Acme Corp as a data engineer.'],
  ['Write a haiku about autumn', 'The user prefers TypeScript for new projects.'],
  ['Write a haiku about autumn', "The user's manager is Rui Costa."],
  ['How do I center a div in CSS?', 'The user is travelling to Berlin at the end of the month.'],
  ['How do I center a div in CSS?', 'The user drives an electric car, a Renault Zoe.'],
  ['Translate "good morning" into French', 'The user prefers meetings in the morning.'],
  ['What is 15% of 80?', 'The user prefers metric units.'],
  ['Tell me a joke', 'The user avoids emojis in replies.'],
  ['Who won the football world cup in 2010?', 'The user is on the payments platform team.'],
  ['Recommend a book for my friend who likes history', "The user's daughter is named Sofia."],
  ['Recommend a book for my friend who likes history', 'The user is preparing for the AWS certification exam in June.'],
  ['How long should I boil an egg?', 'The user uses Neovim as their editor.'],
  ['How long should I boil an egg?', "The user's time zone is Europe/Lisbon."],
  ['Plan a birthday party for my colleague', 'The user is travelling to Berlin at the end of the month.'],
  ['Plan a birthday party for my colleague', 'The user is training for the Lisbon marathon in May.'],
  ['What are good exercises for back pain?', 'The user works at Acme Corp as a data engineer.'],
  ['What is the weather like in Tokyo?', 'The user lives in Lisbon.'],
  ['Explain quantum entanglement simply', 'The user prefers concise answers.'],
  ['Write a cover letter for a nursing job', 'The user prefers TypeScript for new projects.'],
  ['Which movies came out this week?', "The user's dog is called Biscuit."],
  ['Fix the bug in this SQL query', 'The user is vegetarian.'],
  ['Fix the bug in this SQL query', 'The user wants weekly reports written in Portuguese.'],
  ['Suggest a gift for my sister', "The user's manager is Rui Costa."],
  ['Suggest a gift for my sister', 'The user drives an electric car, a Renault Zoe.'],
  ['How do volcanoes form?', 'The user is preparing for the AWS certification exam in June.'],
  ['Give me a packing list for a beach holiday', 'The user is on the payments platform team.'],
  ['Give me a packing list for a beach holiday', 'The user prefers meetings in the morning.'],
  ['What are the rules of chess castling?', "The user's daughter is named Sofia."],
  ['Compare Postgres and MySQL', 'The user uses Neovim as their editor.'],
  ['Recommend weekend activities for a friend', "The user's dog is called Biscuit."],
  ['How do I renew a passport?', 'The user prefers metric units.'],
  ['Write a limerick about a cat', 'The user avoids emojis in replies.'],
  ['What time is it in New York?', 'The user is vegetarian.'],
];

export const CALIBRATION_PAIRS: CalibrationPair[] = [
  ...related.map(([query, memory]) => ({ query, memory, related: true })),
  ...unrelated.map(([query, memory]) => ({ query, memory, related: false })),
];
