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

  it('meets a document in other words than the query: "automobile" finds the car', () => {
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

  it('filters while scanning, and answers nothing for words it never learnt', () => {
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

  it('forgets removed documents', () => {
    index.remove('fruit/banana.md');
    expect(index.size).toBe(2);
    expect(index.search(counts('banana'), 10).map((m) => m.documentId)).not.toContain(
      'fruit/banana.md',
    );
  });
});
