import { trainLsa } from './lsa';
import { SemanticIndex } from './semantic-index';

const counts = (text: string) => {
  const found = new Map<string, number>();
  for (const word of text.split(' ')) found.set(word, (found.get(word) ?? 0) + 1);
  return found;
};

/** Two topics whose words co-occur: vehicles and fruit; two words never met together. */
const TRAINING = [
  'car engine wheel road',
  'automobile engine wheel road',
  'car automobile garage engine',
  'wheel road garage driver',
  'apple banana fruit tree',
  'banana pear fruit market',
  'apple pear orchard tree',
  'fruit orchard market tree',
];

describe('SemanticIndex (latent semantic analysis)', () => {
  const model = trainLsa(TRAINING.map(counts), { dimensions: 4, seed: 1 });
  const index = new SemanticIndex(model);
  index.set('vehicles/car.md', ['a'], counts('car garage'));
  index.set('fruit/pear.md', ['b'], counts('pear orchard'));
  index.set('fruit/banana.md', ['a'], counts('banana market'));

  it('meets a document in other words than the query: "automobile" finds the car', async () => {
    const [first] = index.search(counts('automobile driver'), 3);
    expect(first.documentId).toBe('vehicles/car.md');
    // The fruit documents share no word with the query, and little meaning.
    const fruit = index
      .search(counts('automobile driver'), 3)
      .filter((m) => m.documentId !== first.documentId);
    expect(fruit.every((m) => m.score < first.score / 2)).toBe(true);
  });

  it('is reproducible: the same documents give the same model', () => {
    const again = trainLsa(TRAINING.map(counts), { dimensions: 4, seed: 1 });
    expect(again.id).toBe(model.id);
  });

  it('filters while scanning, and answers nothing for words it never learnt', async () => {
    const all = index.search(counts('fruit tree'), 10);
    expect(
      all
        .map((m) => m.documentId)
        .slice(0, 2)
        .sort(),
    ).toEqual(['fruit/banana.md', 'fruit/pear.md']);
    const found = index.search(counts('fruit tree'), 10, (id, tags) => tags.includes('a'));
    expect(found[0].documentId).toBe('fruit/banana.md');
    expect(found.map((m) => m.documentId)).not.toContain('fruit/pear.md');
    expect(index.search(counts('zeppelin'), 10)).toEqual([]);
  });

  it('admits the documents a filter names, or those its test accepts', () => {
    const ids = index.search(counts('fruit tree'), 10, { ids: ['fruit/pear.md'] });
    expect(ids.map((m) => m.documentId)).toEqual(['fruit/pear.md']);
    const tested = index.search(counts('fruit tree'), 10, (id) => id.startsWith('fruit/'));
    expect(tested.map((m) => m.documentId).sort()).toEqual(['fruit/banana.md', 'fruit/pear.md']);
  });

  it('keeps the best `limit` among many, as a full sort would', () => {
    const many = new SemanticIndex(model);
    for (let i = 0; i < 500; i++) many.set(`doc/${i}`, [], counts(TRAINING[i % TRAINING.length]));
    for (const query of ['automobile driver', 'fruit', 'garage tree']) {
      const all = many.search(counts(query), 500);
      expect(all.length).toBeGreaterThan(10);
      expect(many.search(counts(query), 10)).toEqual(all.slice(0, 10));
    }
  });

  it('forgets removed documents', async () => {
    index.remove('fruit/banana.md');
    expect(index.size).toBe(2);
    const found = index.search(counts('banana'), 10);
    expect(found.map((m) => m.documentId)).not.toContain('fruit/banana.md');
  });
});
