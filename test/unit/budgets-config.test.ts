import { budgetsFromEnv, checkCostBudgetsPriced, costBudgetNames } from '../../activities/usage/budgets';

describe('BUDGETS configuration', () => {
  it('reads tenant and user limits, and names what is wrong in a bad value', () => {
    expect(budgetsFromEnv({})).toEqual({ tenants: {}, users: {} });
    expect(budgetsFromEnv({ BUDGETS: '{"tenants":{"acme":{"tokensPerDay":5}},"users":{"acme/ana":{"costPerDay":2}}}' })).toEqual({
      tenants: { acme: { tokensPerDay: 5 } },
      users: { 'acme/ana': { costPerDay: 2 } },
    });
    expect(() => budgetsFromEnv({ BUDGETS: '{tenants' })).toThrow(/BUDGETS must be JSON/);
    expect(() => budgetsFromEnv({ BUDGETS: '{"users":{"ana":{"tokensPerDay":1}}}' })).toThrow(/BUDGETS is invalid: users\.ana: keys are tenant\/user/);
    expect(() => budgetsFromEnv({ BUDGETS: '{"tenants":{"acme":{"tokensPerDay":-1}}}' })).toThrow(/BUDGETS is invalid: tenants\.acme\.tokensPerDay/);
    expect(() => budgetsFromEnv({ BUDGETS: '{"tenants":{"acme":{"dollars":1}}}' })).toThrow(/BUDGETS is invalid: tenants\.acme/);
  });

  it('refuses a cost limit when the model has no price, since it could never stop a turn', () => {
    const budgets = budgetsFromEnv({ BUDGETS: '{"tenants":{"acme":{"costPerDay":5}},"users":{"acme/ana":{"tokensPerDay":10}}}' });
    expect(costBudgetNames(budgets)).toEqual(['tenants.acme']);
    expect(() => checkCostBudgetsPriced(budgets, {}, 'gpt-x')).toThrow(
      'BUDGETS sets a cost limit (costPerDay in tenants.acme) but MODEL_PRICES has no price for the model "gpt-x", so its calls would cost nothing and the limit would never stop a turn: add the model to MODEL_PRICES, or limit tokens (tokensPerDay) instead',
    );
    expect(() => checkCostBudgetsPriced(budgets, { 'gpt-x': { inputPerMillion: 1, outputPerMillion: 2 } }, 'gpt-x')).not.toThrow();
    // Token limits alone need no price.
    expect(() => checkCostBudgetsPriced(budgetsFromEnv({ BUDGETS: '{"users":{"acme/ana":{"tokensPerDay":10}}}' }), {}, 'gpt-x')).not.toThrow();
  });
});
