"""Generator invariants (claim 1 of the issue): unique names, every template covers every attribute, the
parser inverts the renderer, the task builders' labels and splits."""

import numpy as np
import pytest

from iclr25.knowledge_manipulation import (
    ATTRIBUTES,
    MONTHS,
    REVERSED_TEMPLATES,
    TEMPLATES,
    answer_label,
    build_task,
    make_population,
    parse_bio,
    parse_task,
    read_people_jsonl,
    render_bio,
    write_people_jsonl,
)
from iclr25.knowledge_manipulation.biography import attribute_value, pools, render_sentence


@pytest.fixture(scope="module")
def pop():
    return make_population(300, seed=3)


def test_names_are_unique_and_split_partitions(pop):
    names = [p.name for p in pop.people]
    assert len(set(names)) == len(names) == 300
    assert sorted(pop.train + pop.test) == list(range(300)) and len(pop.train) == 150
    assert make_population(300, seed=3) == pop  # seeded
    assert make_population(300, seed=4).people != pop.people


def test_pools_are_single_tokens_and_disjoint():
    P = pools()
    assert {k: len(v) for k, v in P.items() if k != "company_city"} == {
        "first": 150, "middle": 150, "last": 300, "city": 100, "university": 150, "major": 60, "company": 120}
    words = [w for k in ("first", "middle", "last", "city", "company") for w in P[k]]
    assert len(set(words)) == len(words) and all(w.isalpha() for w in words)


def test_every_template_covers_its_attribute_and_parses_back(pop):
    for table, reverse in ((TEMPLATES, False), (REVERSED_TEMPLATES, True)):
        assert set(table) == set(ATTRIBUTES)
        for a, temps in table.items():
            assert 8 <= len(temps) <= 15, a
            assert len(set(temps)) == len(temps)
            for k, t in enumerate(temps):
                assert t.count("{s}") == 1 and t.count("{v}") == 1, t
                for person in pop.people[:5]:
                    for subject in ([person.name] if reverse else [person.name, person.pronoun]):
                        s = render_sentence(person, a, k, subject=subject, reverse=reverse)
                        parsed = parse_bio(s)
                        assert parsed[a] == attribute_value(person, a), s
                        if subject == person.name:
                            assert parsed["name"] == person.name


@pytest.mark.parametrize("kw", [{}, {"fullname": True}, {"permute": False}, {"order": "attributes_first"}])
def test_bio_round_trip(pop, kw):
    rng = np.random.default_rng(0)
    for person in pop.people[:40]:
        bio = render_bio(person, rng, **kw)
        parsed = parse_bio(bio)
        assert parsed == {"name": person.name, **{a: attribute_value(person, a) for a in ATTRIBUTES}}
        if kw.get("order") != "attributes_first":
            assert bio.startswith(person.name)  # the full name opens the biography even when permuted
        else:
            assert bio.endswith(person.name + ".")  # named once, after every attribute
            assert bio.count(person.name) == 1
        assert bio.count(person.name) == (len(ATTRIBUTES) if kw.get("fullname") else 1)


def test_attributes_first_changes_the_order_only(pop):
    """The control changes one factor: the attributes-first biography names the person as often as the
    name-first one (once, or in every sentence with fullname), only the order differs."""
    person = pop.people[3]
    for fullname in (False, True):
        fwd = render_bio(person, 5, fullname=fullname, permute=False)
        rev = render_bio(person, 5, fullname=fullname, permute=False, order="attributes_first")
        assert fwd.count(person.name) == rev.count(person.name) == (len(ATTRIBUTES) if fullname else 1)
        assert fwd.count(f"{person.pronoun} ") == rev.count(f"{person.pronoun}.") == (0 if fullname else
                                                                                      len(ATTRIBUTES) - 1)
        assert rev.index(person.name) > rev.index(attribute_value(person, "birth_date"))


def test_permutation_and_fresh_templates_vary(pop):
    rng = np.random.default_rng(1)
    bios = {render_bio(pop.people[0], rng) for _ in range(20)}
    assert len(bios) == 20
    firsts = {parse_bio(b) and b.split(". ")[1].split()[0] for b in bios}
    assert firsts <= {"He", "She"}


def test_jsonl_round_trip(pop, tmp_path):
    path = write_people_jsonl(tmp_path / "people.jsonl", pop, multiplicity=2, seed=0)
    back = read_people_jsonl(path)
    assert back.people == pop.people and back.train == pop.train and back.test == pop.test
    import json
    row = json.loads(path.read_text().splitlines()[0])
    assert len(row["bios"]) == 2 and parse_bio(row["bios"][0])["name"] == row["name"]


def test_task_builders_labels_and_splits(pop):
    qs = build_task(pop, "classification:birth_month:mod2", people="test")
    assert {q.person for q in qs} == set(pop.test)
    for q in qs:
        p = pop.people[q.person]
        assert q.label == ("even", "odd")[p.birth_month % 2] and answer_label(q.task, q.answer) == q.label
    cot = build_task(pop, "classification:birth_month:mod2:cot", people="train")
    assert all(q.answer.startswith(MONTHS[pop.people[q.person].birth_month - 1]) for q in cot)
    assert all(answer_label(q.task, q.answer) == q.label for q in cot)
    m3 = build_task(pop, "classification:birth_year:mod3", people="train")
    assert all(q.label == str(pop.people[q.person].birth_year % 3) for q in m3)
    comp = build_task(pop, "comparison:birth_month:cot", people="test", n_pairs=100, seed=2)
    assert len(comp) == 100 and sum(q.label == "yes" for q in comp) == 50
    for q in comp:
        a, b = pop.people[q.person], pop.people[q.other]
        assert q.person in pop.test and q.other in pop.test and a.birth_month != b.birth_month
        assert q.label == ("yes" if a.birth_month < b.birth_month else "no") == answer_label(q.task, q.answer)
    inv = build_task(pop, "inverse:birth_date+birth_city", people="all")
    assert all(q.answer == pop.people[q.person].name + "." for q in inv) and len(inv) >= 295
    part = build_task(pop, "partial:birth_year:cot", people="train")
    assert all(answer_label(q.task, q.answer) == q.label == str(pop.people[q.person].birth_year) for q in part)
    assert all(q.answer.startswith(pop.people[q.person].birth_date) for q in part)
    assert str(parse_task("classification:birth_month:mod2:cot")) == "classification:birth_month:mod2:cot"


def test_tokenizer_is_word_level_dates_three_tokens(pop):
    from iclr25.knowledge_manipulation.experiments import build_tokenizer

    tok = build_tokenizer(make_population(30, seed=0))
    assert tok.tokens("October 2, 1996") == ["October", "2", ",", "1996"]
    p = make_population(30, seed=0).people[0]
    assert len(tok.tokens(p.name)) == 3 and "[UNK]" not in tok.tokens(render_bio(p, 0))
    ids = tok.encode(render_bio(p, 0))
    assert parse_bio(tok.decode(ids))["name"] == p.name
