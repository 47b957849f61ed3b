"""langchain-postgres PGVector and LlamaIndex PGVectorStore against a hatiproxy server.

Run by tests/tools/test_vectorstores.py with the vectorstores tool venv's python:
`python vectorstores_script.py PORT langchain|llamaindex`; prints one JSON object.
Embeddings are each library's own deterministic fake (no model download): the SQL the
stores send is under test, not the embedding.
"""

from __future__ import annotations

import json
import sys

PORT = int(sys.argv[1])


def langchain() -> dict:
    import psycopg
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_postgres import PGVector

    out: dict = {}
    store = PGVector(
        embeddings=DeterministicFakeEmbedding(size=384),
        collection_name="docs",
        connection=f"postgresql+psycopg://x@127.0.0.1:{PORT}/hatidata",
        use_jsonb=True,
    )
    texts = ["the cat sat", "dogs bark loudly", "a cat purrs"]
    metadatas = [{"kind": "cat", "n": 1}, {"kind": "dog", "n": 2}, {"kind": "cat", "n": 3}]
    out["ids"] = store.add_texts(texts, metadatas=metadatas, ids=["a", "b", "c"])
    out["search"] = [d.page_content for d in store.similarity_search("the cat sat", k=2)]
    scored = store.similarity_search_with_score("dogs bark loudly", k=2)
    out["scored"] = [(d.page_content, round(s, 6)) for d, s in scored]
    found = store.similarity_search("x", k=3, filter={"kind": {"$eq": "cat"}})
    out["filter_eq"] = sorted(d.page_content for d in found)
    found = store.similarity_search("x", k=3, filter={"n": {"$gte": 2}})
    out["filter_gte"] = sorted(d.page_content for d in found)
    found = store.similarity_search("x", k=3, filter={"kind": {"$in": ["dog"]}})
    out["filter_in"] = [d.page_content for d in found]
    store.delete(ids=["b"])
    out["after_delete"] = sorted(d.page_content for d in store.similarity_search("x", k=3))
    # The store's own tables declare `FOREIGN KEY ... ON DELETE CASCADE`: dropping the
    # collection takes its embeddings with it.
    store.delete_collection()
    with psycopg.connect(f"host=127.0.0.1 port={PORT} user=x dbname=hatidata") as conn:
        out["left_after_delete_collection"] = conn.execute(
            "SELECT count(*) FROM langchain_pg_embedding"
        ).fetchone()[0]
    return out


def llamaindex() -> dict:
    from llama_index.core import Document, Settings, StorageContext, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.vector_stores import (
        ExactMatchFilter,
        FilterOperator,
        MetadataFilter,
        MetadataFilters,
    )
    from llama_index.vector_stores.postgres import PGVectorStore

    Settings.embed_model = MockEmbedding(embed_dim=384)
    store = PGVectorStore.from_params(
        host="127.0.0.1", port=str(PORT), database="hatidata", user="x", password="x",
        table_name="li_docs", embed_dim=384,
    )  # fmt: skip
    docs = [
        Document(text="the cat sat", metadata={"kind": "cat"}),
        Document(text="dogs bark", metadata={"kind": "dog"}),
    ]
    index = VectorStoreIndex.from_documents(
        docs, storage_context=StorageContext.from_defaults(vector_store=store)
    )
    out: dict = {}
    nodes = index.as_retriever(similarity_top_k=2).retrieve("cat")
    out["retrieved"] = sorted(n.node.get_content() for n in nodes)
    out["scores"] = [round(n.score or 0.0, 6) for n in nodes]
    only_dogs = MetadataFilters(filters=[ExactMatchFilter(key="kind", value="dog")])
    nodes = index.as_retriever(similarity_top_k=5, filters=only_dogs).retrieve("x")
    out["filter_eq"] = [n.node.get_content() for n in nodes]
    either = MetadataFilters(
        filters=[MetadataFilter(key="kind", value=["dog", "cat"], operator=FilterOperator.IN)]
    )
    nodes = index.as_retriever(similarity_top_k=5, filters=either).retrieve("x")
    out["filter_in"] = sorted(n.node.get_content() for n in nodes)
    index.delete_ref_doc(docs[0].doc_id, delete_from_docstore=True)
    nodes = index.as_retriever(similarity_top_k=5).retrieve("cat")
    out["after_delete"] = [n.node.get_content() for n in nodes]
    return out


if __name__ == "__main__":
    print(json.dumps({"langchain": langchain, "llamaindex": llamaindex}[sys.argv[2]]()))
