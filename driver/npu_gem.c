// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * npu_gem.c - buffer objects: shmem-backed GEM objects, mapped into the
 * device address space of every file that holds a handle to them
 * (created, or imported through PRIME), with the VA returned to userspace.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_prime.h>

#include "npu_drv.h"
#include "drm/npu_accel.h"

static struct npu_bo_map *npu_bo_find_map(struct npu_bo *bo, struct npu_file *nfile)
{
	struct npu_bo_map *map;

	lockdep_assert_held(&nfile->ndev->map_lock);
	list_for_each_entry(map, &bo->maps, bo_link)
		if (map->file == nfile)
			return map;
	return NULL;
}

u64 npu_bo_va(struct npu_bo *bo, struct npu_file *nfile)
{
	struct npu_bo_map *map;
	u64 va = 0;

	mutex_lock(&nfile->ndev->map_lock);
	map = npu_bo_find_map(bo, nfile);
	if (map)
		va = map->node.start;
	mutex_unlock(&nfile->ndev->map_lock);
	return va;
}

/* A handle of @file now refers to @obj: make sure it is mapped there. */
static int npu_gem_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct npu_file *nfile = file->driver_priv;
	struct npu_device *ndev = nfile->ndev;
	struct npu_bo *bo = to_npu_bo(obj);
	struct npu_bo_map *map;
	struct sg_table *sgt;
	int idx, ret = 0;

	/* Nothing is DMA-mapped for a device that is gone (npu_gem_unbind_all). */
	if (!drm_dev_enter(&ndev->drm, &idx))
		return -ENODEV;
	/*
	 * The BO's pages (and the mapping's memory) are allocated before
	 * map_lock, which submits take: that lock is never held across their
	 * reclaim. A DMA-mapped BO is listed on ndev->bos below, whatever
	 * happens, so that an unplug unmaps it.
	 */
	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map) {
		ret = -ENOMEM;
		goto out_exit;
	}
	sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
	if (IS_ERR(sgt)) {
		kfree(map);
		ret = PTR_ERR(sgt);
		goto out_exit;
	}
	mutex_lock(&ndev->map_lock);
	if (npu_bo_find_map(bo, nfile)) {
		kfree(map);
		goto out;
	}
	if (list_empty(&bo->dev_link))
		list_add(&bo->dev_link, &ndev->bos);
	map->bo = bo;
	map->file = nfile;
	mutex_lock(&nfile->mmu_lock);
	/* One unmapped guard page after each buffer turns overruns into faults. */
	ret = drm_mm_insert_node_generic(&nfile->va, &map->node, obj->size + NPU_PAGE_SIZE,
					 NPU_PAGE_SIZE, 0, 0);
	if (!ret) {
		ret = npu_mmu_map_sgt(nfile, map->node.start, sgt, obj->size);
		if (ret)
			drm_mm_remove_node(&map->node);
	}
	mutex_unlock(&nfile->mmu_lock);
	if (ret) {
		kfree(map);
		goto out;
	}
	list_add(&map->bo_link, &bo->maps);
	list_add(&map->file_link, &nfile->maps);
out:
	mutex_unlock(&ndev->map_lock);
out_exit:
	drm_dev_exit(idx);
	return ret;
}

/* Caller holds map_lock; @unmap is false when the whole context goes away. */
static void npu_bo_map_destroy(struct npu_bo_map *map, bool unmap)
{
	struct npu_file *nfile = map->file;

	mutex_lock(&nfile->mmu_lock);
	if (unmap && npu_mmu_unmap(nfile, map->node.start, map->bo->base.base.size))
		map->bo->keep_pages = true;
	drm_mm_remove_node(&map->node);
	mutex_unlock(&nfile->mmu_lock);
	list_del(&map->bo_link);
	list_del(&map->file_link);
	kfree(map);
}

/*
 * Caller holds map_lock: give back @bo's DMA mapping (the pages stay for
 * the CPU), as the DMA API wants before the driver is unbound; then
 * drm_gem_shmem_free() finds no sg table to unmap.
 */
static void npu_bo_dma_unmap(struct npu_device *ndev, struct npu_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;

	lockdep_assert_held(&ndev->map_lock);
	dma_resv_lock(obj->resv, NULL);
	if (bo->base.sgt) {
		if (obj->import_attach) {
			dma_buf_unmap_attachment(obj->import_attach, bo->base.sgt,
						 DMA_BIDIRECTIONAL);
		} else {
			dma_unmap_sgtable(ndev->drm.dev, bo->base.sgt, DMA_BIDIRECTIONAL, 0);
			sg_free_table(bo->base.sgt);
			kfree(bo->base.sgt);
		}
		bo->base.sgt = NULL;
	}
	dma_resv_unlock(obj->resv);
	list_del_init(&bo->dev_link);
}

/* Unmap @bo everywhere, then free it (unless the device may still reach it). */
static void npu_bo_release(struct npu_bo *bo)
{
	struct npu_device *ndev = to_npu(bo->base.base.dev);
	struct npu_bo_map *map, *tmp;

	mutex_lock(&ndev->map_lock);
	list_for_each_entry_safe(map, tmp, &bo->maps, bo_link)
		npu_bo_map_destroy(map, true);
	/* Under map_lock, so that an unplug's npu_gem_unbind_all() sees it or not. */
	if (!list_empty(&bo->dev_link))
		npu_bo_dma_unmap(ndev, bo);
	mutex_unlock(&ndev->map_lock);
	if (!bo->keep_pages) {
		drm_gem_shmem_free(&bo->base);
		return;
	}
	/* Pages pinned for good (and the object with them), nothing else. */
	drm_gem_free_mmap_offset(&bo->base.base);
}

static void npu_bo_idle(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	queue_work(npu_wq, &container_of(cb, struct npu_bo, idle_cb)->free_work);
}

/* A deferred free: wait for each fence in turn, then release. */
static void npu_bo_free_work(struct work_struct *work)
{
	struct npu_bo *bo = container_of(work, struct npu_bo, free_work);
	struct drm_device *drm = bo->base.base.dev;

	if (bo->busy_i)			/* the fence that woke us */
		dma_fence_put(bo->busy[bo->busy_i - 1]);
	while (bo->busy_i < bo->busy_n) {
		if (!dma_fence_add_callback(bo->busy[bo->busy_i++], &bo->idle_cb, npu_bo_idle))
			return;		/* npu_bo_idle() queues us again */
		dma_fence_put(bo->busy[bo->busy_i - 1]);
	}
	kfree(bo->busy);
	npu_bo_release(bo);
	drm_dev_put(drm);
}

/*
 * With @busy (room for NPU_NUM_RINGS per mapping), the unsignalled newest
 * fences of the files @bo is mapped in, referenced: how many. Without,
 * how many mappings it has.
 */
static unsigned int npu_bo_busy_fences(struct npu_bo *bo, struct dma_fence **busy)
{
	struct npu_device *ndev = to_npu(bo->base.base.dev);
	struct npu_bo_map *map;
	unsigned int n = 0, r;

	mutex_lock(&ndev->map_lock);
	list_for_each_entry(map, &bo->maps, bo_link) {
		struct npu_file *nfile = map->file;

		if (!busy) {
			n++;
			continue;
		}
		spin_lock(&nfile->last_lock);
		for (r = 0; r < NPU_NUM_RINGS; r++) {
			struct dma_fence *f = nfile->last[r];

			if (f && !test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &f->flags))
				busy[n++] = dma_fence_get(f);
		}
		spin_unlock(&nfile->last_lock);
	}
	mutex_unlock(&ndev->map_lock);
	return n;
}

/*
 * A job may use a BO by address without listing it in its submit. So that
 * such a job still finds the BO whole, its pages stay mapped until every
 * job its files had submitted when it was freed has ended; jobs submitted
 * later cannot know it, and fault if they touch it once it is unmapped
 * (the invalidation completes before any page is freed). Returns false
 * when nothing is in flight: release now.
 */
static bool npu_bo_defer_free(struct npu_bo *bo)
{
	struct drm_device *drm = bo->base.base.dev;
	unsigned int n;

	/* Its handles are gone: mappings can only go, never come. */
	n = npu_bo_busy_fences(bo, NULL);
	if (!n)
		return false;
	/* Without memory, unmap at once: a job of the file may fault, no more. */
	bo->busy = kmalloc_array(n * NPU_NUM_RINGS, sizeof(*bo->busy), GFP_KERNEL);
	if (!bo->busy)
		return false;
	n = npu_bo_busy_fences(bo, bo->busy);
	if (!n) {
		kfree(bo->busy);
		return false;
	}
	bo->busy_n = n;
	bo->busy_i = 0;
	drm_dev_get(drm);		/* the device's state outlives the wait */
	INIT_WORK(&bo->free_work, npu_bo_free_work);
	queue_work(npu_wq, &bo->free_work);
	return true;
}

static void npu_gem_free(struct drm_gem_object *obj)
{
	struct npu_bo *bo = to_npu_bo(obj);

	if (!npu_bo_defer_free(bo))
		npu_bo_release(bo);
}

/*
 * The file is closing, its jobs are done and its context is gone: drop all
 * its mappings. With @keep_pages (the context's invalidation never
 * completed), none of its BOs' pages is ever freed.
 */
void npu_gem_file_release(struct npu_file *nfile, bool keep_pages)
{
	struct npu_bo_map *map, *tmp;

	mutex_lock(&nfile->ndev->map_lock);
	list_for_each_entry_safe(map, tmp, &nfile->maps, file_link) {
		map->bo->keep_pages |= keep_pages;
		npu_bo_map_destroy(map, false);
	}
	mutex_unlock(&nfile->ndev->map_lock);
}

/*
 * The PCI device is going away, stopped, while files and dma-bufs may keep
 * BOs alive: give back every DMA mapping of their pages now, as the DMA API
 * requires before the driver is unbound. The pages stay for the CPU;
 * drm_gem_shmem_free() finds no sg table to unmap later.
 */
void npu_gem_unbind_all(struct npu_device *ndev)
{
	struct npu_bo *bo, *tmp;

	mutex_lock(&ndev->map_lock);
	list_for_each_entry_safe(bo, tmp, &ndev->bos, dev_link)
		npu_bo_dma_unmap(ndev, bo);
	mutex_unlock(&ndev->map_lock);
}

/* For fdinfo's memory keys (drm_show_memory_stats): pages are in while held. */
static enum drm_gem_object_status npu_gem_status(struct drm_gem_object *obj)
{
	return READ_ONCE(to_drm_gem_shmem_obj(obj)->pages) ? DRM_GEM_OBJECT_RESIDENT : 0;
}

static const struct drm_gem_object_funcs npu_gem_funcs = {
	.free = npu_gem_free,
	.status = npu_gem_status,
	.open = npu_gem_open,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

struct drm_gem_object *npu_gem_create_object(struct drm_device *drm, size_t size)
{
	struct npu_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&bo->maps);
	INIT_LIST_HEAD(&bo->dev_link);
	bo->base.base.funcs = &npu_gem_funcs;
	return &bo->base.base;
}

int npu_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct npu_file *nfile = file->driver_priv;
	struct drm_npu_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	int idx, ret;

	if (args->flags || args->handle || args->va)
		return -EINVAL;
	if (!args->size || args->size > NPU_MAX_BO_SIZE)
		return args->size ? -E2BIG : -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	if (npu_wedged(to_npu(drm))) {
		ret = -EIO;
		goto out;
	}
	shmem = drm_gem_shmem_create(drm, PAGE_ALIGN(args->size));
	if (IS_ERR(shmem)) {
		ret = PTR_ERR(shmem);
		goto out;
	}
	ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	if (!ret)
		args->va = npu_bo_va(to_npu_bo(&shmem->base), nfile);
	drm_gem_object_put(&shmem->base);
out:
	drm_dev_exit(idx);
	return ret;
}

int npu_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct npu_file *nfile = file->driver_priv;
	struct drm_npu_bo_info *args = data;
	struct drm_gem_object *obj;
	int idx, ret;

	if (args->pad)
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	if (npu_wedged(to_npu(drm))) {
		ret = -EIO;
		goto out;
	}
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj) {
		ret = -ENOENT;
		goto out;
	}
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->size = obj->size;
		args->va = npu_bo_va(to_npu_bo(obj), nfile);
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	}
	drm_gem_object_put(obj);
out:
	drm_dev_exit(idx);
	return ret;
}
