/* dirigo's C shim: DPDK's static-inline fast-path functions and the
 * RTE_BIT64 flag constants that bindgen cannot see, as real symbols. */
#ifndef DIRIGO_SHIM_H
#define DIRIGO_SHIM_H
#include <stdint.h>

struct rte_mbuf;
struct rte_mempool;
struct rte_ring;

uint16_t dg_rx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
uint16_t dg_tx_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);

struct rte_mbuf *dg_pktmbuf_alloc(struct rte_mempool *mp);
int dg_pktmbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **pkts, unsigned n);
void dg_pktmbuf_free(struct rte_mbuf *m);
void dg_pktmbuf_free_bulk(struct rte_mbuf **pkts, unsigned n);
char *dg_pktmbuf_prepend(struct rte_mbuf *m, uint16_t len);
char *dg_pktmbuf_adj(struct rte_mbuf *m, uint16_t len);
char *dg_pktmbuf_append(struct rte_mbuf *m, uint16_t len);
int dg_pktmbuf_trim(struct rte_mbuf *m, uint16_t len);
uint16_t dg_pktmbuf_headroom(const struct rte_mbuf *m);
uint16_t dg_pktmbuf_tailroom(const struct rte_mbuf *m);
unsigned dg_mempool_avail_count(const struct rte_mempool *mp);

unsigned dg_lcore_id(void);
uint64_t dg_rdtsc(void);
uint64_t dg_tsc_hz(void);
int dg_errno(void);

unsigned dg_ring_enqueue_burst(struct rte_ring *r, void *const *objs, unsigned n);
unsigned dg_ring_dequeue_burst(struct rte_ring *r, void **objs, unsigned n);
unsigned dg_ring_count(const struct rte_ring *r);
/* rte_softrss: Toeplitz over input_len host-order 32-bit words */
uint32_t dg_softrss(uint32_t *input_tuple, uint32_t input_len, const uint8_t *rss_key);


/* RTE_BIT64 constants */
extern const uint64_t DG_ETH_RSS_IP;
extern const uint64_t DG_ETH_RSS_TCP;
extern const uint64_t DG_ETH_RSS_UDP;
extern const uint64_t DG_ETH_RSS_IPV4;
extern const uint64_t DG_ETH_RSS_FRAG_IPV4;
extern const uint64_t DG_ETH_RSS_NONFRAG_IPV4_TCP;
extern const uint64_t DG_ETH_RSS_NONFRAG_IPV4_UDP;
extern const uint64_t DG_ETH_RSS_NONFRAG_IPV4_OTHER;
extern const uint64_t DG_ETH_RSS_L3_SRC_ONLY;
extern const uint64_t DG_ETH_RSS_L3_DST_ONLY;
extern const uint64_t DG_ETH_RX_OFFLOAD_CHECKSUM;
extern const uint64_t DG_ETH_TX_OFFLOAD_IPV4_CKSUM;
extern const uint64_t DG_ETH_TX_OFFLOAD_TCP_CKSUM;
extern const uint64_t DG_ETH_TX_OFFLOAD_UDP_CKSUM;
extern const uint64_t DG_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
extern const uint64_t DG_MBUF_F_TX_IPV4;
extern const uint64_t DG_MBUF_F_TX_IP_CKSUM;
extern const uint64_t DG_MBUF_F_TX_TCP_CKSUM;
extern const uint64_t DG_MBUF_F_TX_UDP_CKSUM;
extern const uint64_t DG_MBUF_F_RX_RSS_HASH;
extern const uint32_t DG_ETH_LINK_SPEED_AUTONEG;
#endif
